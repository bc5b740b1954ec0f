// Registration of the reduce op implementations (computes in reduce.cpp). They use the default
// schedule, which keeps reductions at the root, parallel over their data axes and vectorized
// over the innermost data axis when that axis is the contiguous one, else over the innermost
// reduce axis (a SIMD reduction) when the reads walk memory along it.
#include "topi/reduce.h"
#include "topi/topi.h"

namespace sy::topi {

void register_reduce(Registry& r) { register_reduce_computes(r); }

}  // namespace sy::topi
