// Lowering of a scheduled tensor-expression program to one loop-IR function: loop nests per
// stage, bound inference for compute_at regions, inlining, then the default pass pipeline.
#pragma once
#include <string>
#include <vector>

#include "te/schedule.h"
#include "tir/pipeline.h"
#include "tir/stmt.h"

namespace sy::te {

struct LowerOptions {
  bool run_passes = true;  // false: the raw loop nests (for tests of the passes)
  tir::PassOptions passes;
};

// args: the function's buffers in calling order (placeholders and outputs; every placeholder the
// outputs need and every output of the schedule must be among them).
tir::PrimFunc lower(Schedule& sch, const std::vector<Tensor>& args, const std::string& name,
                    const LowerOptions& opts = {});

}  // namespace sy::te
