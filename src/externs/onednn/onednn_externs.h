// The oneDNN extern implementations (conv2d, dense, matmul), registered by
// register_onednn_externs (called from the generated registration file, see cmake/backends.cmake).
#pragma once

namespace sy::externs {
void register_onednn_externs();
}

namespace sy::externs::onednn {
void register_conv2d();
void register_matmul();
}  // namespace sy::externs::onednn
