// Arithmetic simplification before native compilation: rewrites that make generated code cheaper
// without changing results beyond rounding of the same operations.
#pragma once
#include "ir/module.h"

namespace sy::passes {

// power(x, 2) with a constant exponent of one element -> multiply(x, x): layer norm's variance
// otherwise calls powf per element (its exponent is a kernel parameter, unknown to the compiler).
// x * x is the correctly rounded square, which powf also returns.
//
// nn.batch_norm with constant statistics -> (x - mean) * k + bias, k = scale / sqrt(var + eps)
// folded in double as the reference computes it: no sqrt and divide per element.
//
// nn.conv2d whose taps mostly or only read padding -> one conv per region of outputs with the
// same taps reading the input, or the conv with its other taps (conv_dead_taps.h).
//
// nn.conv2d_transpose -> one nn.conv2d of its stride phases, interleaved and cropped
// (conv_transpose_as_conv.h).
//
// nn.avg_pool2d of a zero nn.pad of the plane -> the pool with that padding, counted.
ir::Module simplify_arith(const ir::Module& m);

}  // namespace sy::passes
