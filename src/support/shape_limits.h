// The bound on shapes read from outside (a model's inputs, IR text, .npy files).
#pragma once
#include <cstdint>

#include "support/tensor.h"

namespace sy {

// Such shapes are refused unless the product of their non-zero extents is at most
// kMaxShapeElements, so that no element count, stride or byte size computed from them overflows
// int64. A zero extent does not excuse the others: the strides of (0, 2^40, 2^40) overflow
// although it has no elements.
inline constexpr int64_t kMaxShapeElements = int64_t{1} << 56;
bool shape_within_limits(const Shape& s);  // false also for a negative extent

}  // namespace sy
