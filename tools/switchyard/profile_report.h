// `run --profile`: where a native run spends its time, per kernel.
#pragma once
#include <ostream>

#include "native/executable.h"

namespace sy::cli {

// A table of the kernels (and external calls) by time per run, slowest first: time, share,
// launches, GFLOP/s and the fused ops; `top` rows (0: all), then the rest summed.
void print_profile(std::ostream& os, const native::Plan& plan, const native::CallTimes& times, int top);

}  // namespace sy::cli
