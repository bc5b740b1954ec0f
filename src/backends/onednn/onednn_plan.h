// One oneDNN region compiled for the current thread count: every primitive created once, weights
// reordered once into the layouts the primitives prefer, activations kept in those (blocked)
// layouts inside the region, intermediate memory planned and allocated once. run() binds the
// inputs and outputs and executes the primitives in order.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ops/op.h"
#include "support/tensor.h"

namespace sy::backends::onednn {

struct PlanStats {
  int primitives = 0;        // steps executed per run (including reorders)
  int reorders = 0;          // of which layout reorders (boundary, plain-layout ops, residual copies)
  int fused_post_ops = 0;    // post-ops fused into conv/dense/matmul/batch-norm primitives
  int post_ops_left_for_reference = 0;  // primitives whose binary post-ops run as steps: fused, oneDNN had only its reference kernel
  int scaled_weights = 0;    // convolutions that took a per-channel scale of their input into their weights
  size_t arena_bytes = 0;    // intermediate memory (after reuse)
  size_t weight_bytes = 0;   // constant weights this plan reordered (not those shared from another plan)
  std::vector<std::string> kernels;  // implementation name of each primitive, in order
  std::vector<std::string> reference_kernels;  // "op: ref:any" for each primitive on oneDNN's reference loop
};

// "" when dst = a op b, b broadcasting to `out` (b's shape), has a JIT kernel whatever layout a
// takes in a region (plain, channel-blocked, channels-last); else why not, e.g. "broadcast
// 1x144x1x1 on aBcd8b runs oneDNN's reference kernel". The claim-time check of broadcast ops.
std::string broadcast_binary_reference(ops::OpCode op, const Shape& out, const Shape& b);

// Constant weights reordered into primitive layouts, shared by the plans of one module (a plan per
// thread count reuses the reordered copies instead of making its own).
struct WeightStore;
std::shared_ptr<WeightStore> make_weight_store();

class Plan {
 public:
  // Builds the plan of `function` (a FunctionNode); throws sy::Error naming `symbol` and the op when
  // oneDNN cannot create a primitive for it. `weights` may be null (a private store).
  Plan(const std::string& symbol, const ir::Expr& function, std::shared_ptr<WeightStore> weights = nullptr);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Inputs: one per parameter (checked); returns the flattened results as plain row-major tensors.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  const PlanStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sy::backends::onednn
