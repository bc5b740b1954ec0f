// The loop-IR pass pipeline, as a plain script, with a dump of the IR after any named pass.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tir/stmt.h"

namespace sy::tir {

struct PassOptions {
  // Pass names after which the function is printed to dump (or stderr when dump is unset):
  // "lower" (before any pass), "simplify", "loop_partition", "unroll", "vectorize", "remove_no_op", "hoist_guards", or "all".
  std::vector<std::string> dump_after;
  std::function<void(const std::string& pass, const std::string& text)> dump;
};

// simplify, loop_partition, simplify, loop_partition, simplify, unroll, vectorize, remove_no_op, hoist_guards,
// simplify; then verifies the result.
PrimFunc run_default_passes(PrimFunc f, const PassOptions& opts = {});

}  // namespace sy::tir
