// The oneDNN extern implementations (conv2d, dense, matmul), registered by
// register_onednn_externs (called from the generated registration file, see cmake/backends.cmake),
// and the stages that call them, for an integration that builds its own loop IR around them (the
// oneDNN target hook, src/backends/onednn_hook).
#pragma once
#include <string>
#include <vector>

#include "ir/expr.h"
#include "te/tensor.h"

namespace sy::externs {
void register_onednn_externs();
}

namespace sy::externs::onednn {
void register_conv2d();
void register_matmul();
void register_pool2d();

// A post-op of conv2d_stage, in the order they apply: relu; clip to [lo, hi]; SiLU x * sigmoid(x)
// (oneDNN's swish); add a tensor of the
// result's shape and layout (the next of conv2d_stage's `added`); Sum, the first post-op only:
// the same, the primitive accumulating onto the result's buffer, which the added tensor's may be
// (an output planned in place of that input: native::kInPlaceAttr), else it is copied there first.
struct ConvPost {
  enum Kind { Relu = 1, Clip = 2, Add = 3, Sum = 4, Silu = 5 } kind = Relu;
  double lo = 0, hi = 0;
};

// A block that means NHWC, [N, 1, H, W, C]: the bytes of nChw<C>c, described as the layout
// oneDNN's brgemm kernels take (and not as nChw16c for 16 channels, which its direct JIT kernels take).
inline constexpr int64_t kNhwcBlock = -1;

// The call of sy_onednn_conv2d for `conv`'s attributes (a stateful extern stage: the primitive is
// made at load, a constant weight reordered once). x and the result (shape `out`) are NCHW or
// channel-blocked [N, C/B, H, W, B] (oneDNN's nChw<B>c, B = 4, 8 or 16; with `nhwc`, the blocked
// ones are [N, 1, H, W, C], NHWC; the primitive is made for exactly these layouts); w is the conv's weight ([O, C/G, KH, KW] or the native packing),
// `bias` null or [O]; `added` the add post-ops' tensors, in the result's layout.
te::Tensor conv2d_stage(const std::string& name, const ir::CallNode& conv, const te::Tensor& x, const te::Tensor& w,
                        const te::Tensor* bias, const std::vector<ConvPost>& posts, const std::vector<te::Tensor>& added,
                        const Shape& out, bool nhwc = false);

// The implementation oneDNN makes for `conv` (no post-ops) on this machine, its impl_info_str
// ("brgconv_1x1:avx512_core"; "ref:any" is its reference loop, 10-1000x slower), with the data and
// the result NCHW (block 0), channel-blocked by `src_block` / `dst_block`, or NHWC (block -1);
// "" when it makes none.
// A hook chooses layouts with it: oneDNN 2.6 has only its reference loop for a blocked data and an
// NCHW result or the reverse (EfficientNet's 24-channel projections: 220 ms per call).
std::string conv2d_implementation(const ir::CallNode& conv, int64_t src_block, int64_t dst_block);

// The call of sy_onednn_pool2d: max pooling (kernel, strides, padding top, left, bottom, right;
// every window holds an input element) or global average pooling (`global`), x and the result
// NCHW or channel-blocked in the same layout (`nhwc`: as conv2d_stage's).
te::Tensor pool2d_stage(const std::string& name, bool global, const std::vector<int64_t>& kernel,
                        const std::vector<int64_t>& strides, const std::vector<int64_t>& padding, const te::Tensor& x,
                        const Shape& out, bool nhwc = false);

// The call of sy_onednn_matmul, plus a bias of N values when non-null: a [.., K] x W [N, K]^T
// (Dense: nn.dense with a plain weight), a x b (MatMul: same-rank operands), or a [.., K] x b [K, N]
// (Rows: a 2-d right operand, a's leading dims folded into rows).
// `act` is applied to the result by the primitive (an eltwise post-op).
enum class GemmForm { Dense, MatMul, Rows };
enum MatMulAct : int64_t { kActNone = 0, kActRelu = 1, kActGeluErf = 2, kActGeluTanh = 3 };
// `residual`: a tensor of the result's shape added after the bias and the activation (oneDNN's
// binary add post-op).
te::Tensor matmul_stage(const std::string& name, GemmForm form, const te::Tensor& a, const te::Tensor& b,
                        const te::Tensor* bias, const Shape& out, MatMulAct act = kActNone,
                        const te::Tensor* residual = nullptr);
}  // namespace sy::externs::onednn
