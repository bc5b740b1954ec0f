// Tuning tasks: the distinct native kernels of a model for a target, each with what is needed to
// build it on its own (a one-call module with the model's own weights) and to recognise it again
// (the workload key, the same one compile --records looks up).
#pragma once
#include <string>
#include <vector>

#include "ir/module.h"
#include "ops/op.h"
#include "target/target.h"

namespace sy::tune {

// Identifies a kernel for a target: a hash (16 hex digits) of the planned fused function's canonical text (ops,
// attributes, types; weights in their packed types, no names, no choice attributes).
std::string workload_key(const ir::FunctionNode& planned);

struct Task {
  std::string key;          // workload_key of the planned function
  std::string description;  // strategy::describe of its anchor
  std::string op;           // the anchor's op name
  int uses = 0;             // calls per run of the model
  int64_t flops = 0;        // of one call (the anchor's, ops::op_flops)
  // main(inputs...) = call(fused function, inputs and the model's weights as constants): what a
  // candidate is compiled from, and what the reference executor runs for the check.
  ir::Module module;
  // The kernel's function as compile_native plans it (weights in their packed types).
  ir::Expr planned;
  // Implementations that apply, in the strategy's order.
  std::vector<std::string> implementations;
};

// The kernels of m (any module compile_native accepts) with at least one native implementation,
// in the plan's order. Kernels of one op family without a choice (one implementation, no knobs)
// are included; the tuner skips what has nothing to choose.
std::vector<Task> extract_tasks(const ir::Module& m, const target::Target& t);

}  // namespace sy::tune
