// Lowering of one fused primitive function (fn ... attrs {Primitive="1"}) to one loop-IR kernel:
// each op's compute from topi, the anchor op's schedule for the whole group, then te::lower. The
// anchor's implementation is the one the function's Implementation attribute names (see
// strategy/), else the strategy's default.
#pragma once
#include <optional>
#include <random>
#include <string>

#include "ir/expr.h"
#include "target/target.h"
#include "te/schedule.h"
#include "tir/stmt.h"

namespace sy::native {

struct LowerFunctionOptions {
  // Receives the knob space the schedule defines (and is read for values); the function's Knobs
  // attribute, if any, is set on it first. Null: the function's Knobs attribute, else defaults.
  te::Knobs* knobs = nullptr;
  const target::Target* target = nullptr;  // null: the host
};

// The kernel's parameters are the function's parameters in order, then its outputs (one per
// result tensor; a tuple result is flattened). Throws sy::Error naming an op that has no
// native implementation or an attribute value it does not support.
tir::PrimFunc lower_function(const ir::FunctionNode& fn, const std::string& name,
                             const LowerFunctionOptions& opts = {});

// A uniformly drawn value for each knob the schedule of fn (with its Implementation attribute)
// defines, in definition order: a knob's candidates may depend on the knobs before it, so each
// is drawn from the space lowering gives with the earlier ones set. "" for a schedule without
// knobs; nullopt if fn does not lower.
std::optional<std::string> random_knobs(const ir::FunctionNode& fn, const target::Target& t, std::mt19937_64& rng);

}  // namespace sy::native
