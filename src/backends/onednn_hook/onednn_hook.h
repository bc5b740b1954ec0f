// The oneDNN integration through a target hook: its claims (composite rules) and its lowering of
// a region into loop IR that calls oneDNN's primitives (the extern stages of src/externs/onednn),
// with activations kept in oneDNN's channel-blocked layout between its convolutions.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ops/op.h"
#include "target/target.h"

namespace sy::backends::onednn_hook {

// A matched or outlined chain act(add(anchor, other)), each step optional; or, for a GEMM,
// add(add(anchor, bias), residual) (a transformer's residual connection after its bias).
struct Chain {
  const ir::CallNode* anchor = nullptr;  // conv2d, dense or matmul
  const ir::CallNode* add = nullptr;
  ir::Expr other;                        // the add's operand that is not the anchor
  const ir::CallNode* act = nullptr;     // relu, clip, gelu or SiLU's multiply
  const ir::CallNode* residual_add = nullptr;
  ir::Expr residual;                     // its operand that is not the GEMM's
};
Chain chain_of(const ir::Expr& root);
// The name of the composite a call calls ("" for anything else).
std::string composite_of(const ir::CallNode& c);
// Which argument of a call of an onednn_hook.gelu_erf composite is the GELU's input (the others
// are its constants).
size_t gelu_input(const ir::CallNode& gelu);
const ir::CallNode* as_op(const ir::Expr& e, ops::OpCode op);

std::vector<CompositeRule> rules();

// The layout a region's activations keep between the hook's primitives: channel-blocked by the
// target's vector width (nChw16c with AVX-512, nChw8c with AVX2), what oneDNN's direct JIT
// kernels take; or NHWC, what its brgemm kernels take (AVX-512 only; oneDNN's own choice there,
// `format_tag::any`, and so the BYOC backend's layout). Both are held as [N, C/B, H, W, B]: NHWC
// is the block of all C channels. Measured on AVX-512 (2 threads, alternating runs):
//  - ResNet-50, all in one region: NHWC 4-10% faster (brgconv against jit:avx512_core);
//  - EfficientNet-B0, regions cut by its squeeze-and-excitation (native) into pieces with
//    depthwise convolutions: NHWC 8.9 -> 10.8 ms (its depthwise and small 1x1 convolutions ran
//    slower, and the reorders at the many edges cost more: NHWC <-> NCHW is a transpose, blocked
//    <-> NCHW moves rows of 16).
// So a region is NHWC when the target has AVX-512, it holds no grouped convolution, and its
// convolutions do enough work per byte that crosses its edge to pay for NHWC's dearer reorders:
// ResNet-50 (one region) 13,000 FLOP per byte; a DenseNet-121 block's 1x1 + 3x3 ~120 (NHWC and
// blocked ran alike); EfficientNet's squeeze-and-excitation regions (a pooling of a large tensor
// and two 1x1 convolutions on 1x1 maps) under 1 (NHWC 4% slower over the model).
struct Layout {
  int64_t lanes = 0;  // the block when not NHWC
  bool nhwc = false;
  int64_t block(int64_t channels) const { return nhwc ? channels : lanes; }
  bool fits(int64_t channels) const { return channels > 0 && (nhwc || (lanes > 1 && channels % lanes == 0)); }
};
// For `region` (a region of the hook's composites, or one of its split pieces, which say theirs:
// kLayoutAttr); without one, the blocked layout (what the rules ask about: a convolution they
// take runs in it, and so in NHWC too). SWITCHYARD_ONEDNN_HOOK_LAYOUT=nhwc or blocked forces one
// for every region (tests run the differential suite through NHWC with it; random graphs are too
// small to choose it).
Layout layout_for(const target::Target& target, const ir::FunctionNode* region = nullptr);
inline constexpr const char* kLayoutAttr = "OnednnHookLayout";  // "nhwc" or "blocked"
inline constexpr double kNhwcFlopsPerEdgeByte = 300;

// Whether a convolution reads its data (src) and writes its result (dst) in the layout L (else
// NCHW): where the channels allow, unless oneDNN has only its reference loop for that pair on
// this machine (a blocked data and an NCHW result, or the reverse); then both in L if the
// channels allow, else both NCHW. The split and the lowering both ask it, so they agree.
struct ConvLayouts {
  bool src = false, dst = false;
};
ConvLayouts conv_layouts(const ir::CallNode& conv, const Layout& L);
// Whether oneDNN runs the convolution with a kernel of its own (not its reference loop) in the
// layouts conv_layouts chooses; the rules decline it otherwise.
bool conv_has_kernel(const ir::CallNode& conv, const Layout& L);

// The region as one kernel per composite and per layout change at its edges
// (backends::LoweringHook::split); nullopt for a region that holds something else.
std::optional<ir::Expr> split_region(const ir::FunctionNode& fn, const target::Target& target);

// Lowers a region of onednn_hook composites, or one piece of a split region, to one kernel
// (backends::LoweringHook::lower).
tir::PrimFunc lower_region(const ir::FunctionNode& fn, const std::string& name, const target::Target& target);

}  // namespace sy::backends::onednn_hook
