// Seeded random tensors: the CLI's and the API's random inputs, and the inputs on which measured
// placement times and checks a region. The same seed gives the same data on every machine.
#pragma once
#include <cstdint>

#include "support/tensor.h"

namespace sy {

// Floats uniform in [-1, 1), integers uniform in [0, 10) (small and non-negative, so they are
// valid indices and token ids), bools 0/1 with equal odds.
Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed);

}  // namespace sy
