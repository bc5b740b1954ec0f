// A transposed convolution as an ordinary one. Computed as it is defined (each output gathers the
// inputs whose taps land on it, a stride test per tap), U-Net's 2x2 stride-2 upsampling of 128
// channels on 32x32 ran at 1 GFLOP/s: 49 ms, 71% of the model, where the convs around it ran
// at 200.
#pragma once
#include <vector>

#include "ir/expr.h"

namespace sy::passes {

// nn.conv2d_transpose call c with arguments args (data, a constant weight, optionally a bias) as the sub-pixel form: output row t = q * s + r (phase r of stride s) sums the taps
// k = r + j * s over inputs q - j, an ordinary stride-1 conv for each phase. One nn.conv2d
// computes all s_h * s_w phases as channels (its kernel ceil(K / s) taps per axis, the taps a
// phase lacks zero), a reshape and transpose interleave them into rows and columns, and a slice
// drops the padding. A 2x2 stride-2 upsampling becomes a 1x1 conv (no wasted work); 3x3
// stride 2 computes 16 taps for 9. A constant bias joins the conv (one copy per phase), a
// computed one is added after the slice. nullptr where the weight is not a constant, the
// dilation is not 1, or the dtype is not f32.
ir::Expr conv_transpose_as_conv(const ir::CallNode& c, const std::vector<ir::Expr>& args);

}  // namespace sy::passes
