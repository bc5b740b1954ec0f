// The oneDNN backend's ordered composite table (conv2d / dense / matmul / batch-norm with fused
// bias, residual add and activation post-ops).
#pragma once
#include <vector>

#include "backends/backend.h"

namespace sy::backends::onednn {

std::vector<CompositeRule> make_composite_rules();

}  // namespace sy::backends::onednn
