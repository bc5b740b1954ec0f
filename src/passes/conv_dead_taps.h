// Convolution taps that never read the input: a dilation as large as the plane (DeepLabV3's
// atrous pyramid: rates 12, 24 and 36 on a 14x14 map) puts every tap but the centre in the
// padding for every output pixel. Computed, they multiply zeros: 9x the work of the conv that
// matters (3.1-3.3 ms each of DeepLabV3-MobileNetV3's three 960->256 convs, 2 threads).
#pragma once
#include <vector>

#include "ir/expr.h"

namespace sy::passes {

// nn.conv2d call c with arguments args (data, a constant weight, optionally a bias) without the
// multiply-adds of its taps with padding, the same values (the reference executor skips those
// taps too):
//  - where at most a third of the work reads the input, one conv per region of outputs whose
//    taps that read it are the same (no padding; a slice of the input), the regions joined by
//    concatenations (DeepLabV3's rate-12 conv on 14x14: 9 regions, 18% of the work);
//  - else its kernel cut to the taps that read the input for some output (a contiguous run per
//    axis) and its padding cut by as many dilated taps (rates 24 and 36 there: the centre tap).
// nullptr when neither applies, the weight is not a constant, or a cut would need a negative
// padding.
ir::Expr conv_without_dead_taps(const ir::CallNode& c, const std::vector<ir::Expr>& args);

}  // namespace sy::passes
