// The oneDNN integration through a target hook: its claims (composite rules) and its lowering of
// a region into loop IR that calls oneDNN's primitives (the extern stages of src/externs/onednn),
// with activations kept in oneDNN's channel-blocked layout between its convolutions.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ops/op.h"

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

// Whether a convolution reads its data (src) and writes its result (dst) channel-blocked by B
// (else NCHW): blocked where the channels allow, unless oneDNN has only its reference loop for
// that pair on this machine (a blocked data and an NCHW result, or the reverse); then both blocked
// if the channels allow, else both NCHW. The split and the lowering both ask it, so they agree.
struct ConvLayouts {
  bool src = false, dst = false;
};
ConvLayouts conv_layouts(const ir::CallNode& conv, int64_t B);
// Whether oneDNN runs the convolution with a kernel of its own (not its reference loop) in the
// layouts conv_layouts chooses; the rules decline it otherwise.
bool conv_has_kernel(const ir::CallNode& conv, int64_t B);

// The region as one kernel per composite and per layout change at its edges
// (backends::LoweringHook::split); nullopt for a region that holds something else.
std::optional<ir::Expr> split_region(const ir::FunctionNode& fn, const target::Target& target);

// Lowers a region of onednn_hook composites, or one piece of a split region, to one kernel
// (backends::LoweringHook::lower).
tir::PrimFunc lower_region(const ir::FunctionNode& fn, const std::string& name, const target::Target& target);

}  // namespace sy::backends::onednn_hook
