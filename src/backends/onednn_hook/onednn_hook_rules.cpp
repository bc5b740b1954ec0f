// What the oneDNN target hook claims: convolutions with their bias, a residual add and relu,
// clip or SiLU (oneDNN's post-ops), and dense / matmul with a bias and relu or GELU, or with a bias and
// a residual add. Each rule's check says why a match is refused (--explain shows it).
#include "backends/onednn_hook/onednn_hook.h"
#include "target/host.h"

#include <algorithm>

#include "ir/visitor.h"
#include "ops/attrs.h"
#include "support/error.h"
#include "ops/op.h"
#include "pattern/idioms.h"

namespace sy::backends::onednn_hook {

using ops::OpCode;
using namespace pattern;

const ir::CallNode* as_op(const ir::Expr& e, OpCode op) {
  auto* c = e->as<ir::CallNode>();
  return c && c->is_op() && c->op == op ? c : nullptr;
}

Chain chain_of(const ir::Expr& root) {
  Chain ch;
  ir::Expr e = root;
  if (auto* r = as_op(e, OpCode::Relu)) {
    ch.act = r;
    e = r->args[0];
  } else if (auto* c = as_op(e, OpCode::Clip)) {
    ch.act = c;
    e = c->args[0];
  } else if (auto* g = as_op(e, OpCode::Gelu)) {
    ch.act = g;
    e = g->args[0];
  } else if (auto* m = as_op(e, OpCode::Mul); m && silu_operand(*m)) {
    ch.act = m;
    e = *silu_operand(*m);
  }
  // A GEMM's bias add, then a residual add: add(add(gemm, bias), residual), either order each.
  auto gemm = [](const ir::Expr& x) { return as_op(x, OpCode::Dense) || as_op(x, OpCode::MatMul); };
  auto biased_gemm = [&](const ir::Expr& x) {
    auto* a = as_op(x, OpCode::Add);
    return a && (gemm(a->args[0]) || gemm(a->args[1]));
  };
  if (auto* r = as_op(e, OpCode::Add); r && !ch.act && biased_gemm(r->args[0]) != biased_gemm(r->args[1])) {
    const bool first = biased_gemm(r->args[0]);
    ch.residual_add = r;
    ch.residual = r->args[first ? 1 : 0];
    e = r->args[first ? 0 : 1];
  }
  if (auto* a = as_op(e, OpCode::Add)) {
    const bool anchor_first = as_op(a->args[0], OpCode::Conv2d) || as_op(a->args[0], OpCode::Dense) ||
                              as_op(a->args[0], OpCode::MatMul);
    ch.add = a;
    ch.other = a->args[anchor_first ? 1 : 0];
    e = a->args[anchor_first ? 0 : 1];
  }
  ch.anchor = e->as<ir::CallNode>();
  return ch;
}

std::string composite_of(const ir::CallNode& c) {
  auto* f = c.callee ? c.callee->as<ir::FunctionNode>() : nullptr;
  auto name = f ? f->attrs.find("Composite") : ir::FuncAttrs::const_iterator();
  return f && name != f->attrs.end() ? name->second : "";
}

size_t gelu_input(const ir::CallNode& gelu) {
  const auto* f = gelu.callee->as<ir::FunctionNode>();
  for (const ir::Expr& e : ir::post_order(f->body))
    if (auto* d = as_op(e, OpCode::Div))
      for (size_t i = 0; i < f->params.size(); ++i)
        if (f->params[i].get() == d->args[0].get()) return i;
  throw Error("onednn_hook: a gelu composite without its input");
}

namespace {

bool f32(const ir::Expr& e) { return ir::is_tensor(e->type) && ir::as_tensor(e->type).dtype == DType::f32; }

std::string check_conv(const Match& m) {
  const Chain ch = chain_of(m.nodes.back());
  if (!ch.anchor || !ch.anchor->is_op() || ch.anchor->op != OpCode::Conv2d) return "onednn_hook: no conv2d in the match";
  for (const ir::Expr& a : ch.anchor->args)
    if (!f32(a)) return "onednn_hook conv2d: float32 only";
  if (ir::shape_of(ch.anchor->args[0]).size() != 4) return "onednn_hook conv2d: not a 2-d convolution over NCHW";
  if (ir::shape_of(ch.anchor->args[1]).size() != 4) return "onednn_hook conv2d: the weight is not [O, C/G, KH, KW]";
  if (ch.add && (!f32(ch.other) || ir::shape_of(ch.other) != ir::as_tensor(ch.anchor->type).shape))
    return "onednn_hook conv2d: the add's other operand " + shape_str(ir::shape_of(ch.other)) +
           " is not of the result's shape (oneDNN's sum post-op does not broadcast here)";
  if (ch.act && ch.act->op == OpCode::Gelu) return "onednn_hook conv2d: GELU is not one of its post-ops";
  // oneDNN's GEMM-based convolutions (NCHW results) apply an eltwise post-op in a loop of their
  // own, 10-20x the convolution: EfficientNet's 24 -> 144 channel 1x1 on 56x56 2.1 ms with SiLU,
  // 0.13 ms without; MobileNetV2's with ReLU6 1.6 ms. The activation is then a native kernel.
  if (ch.act && !conv_layouts(*ch.anchor, layout_for(target::host())).dst)
    return "onednn_hook conv2d: an activation on an NCHW result (" +
           std::to_string(ir::as_tensor(ch.anchor->type).shape[1]) + " channels, not whole blocks) runs slowly in oneDNN";
  if (!conv_has_kernel(*ch.anchor, layout_for(target::host())))
    return "onednn_hook conv2d: oneDNN has only its reference loop for it, in NCHW and blocked layouts";
  return "";
}

std::string check_gemm(const Match& m) {
  const Chain ch = chain_of(m.nodes.back());
  if (!ch.anchor || !ch.anchor->is_op()) return "onednn_hook: no dense or matmul in the match";
  for (const ir::Expr& a : ch.anchor->args)
    if (!f32(a)) return "onednn_hook: float32 only";
  const Shape& a = ir::shape_of(ch.anchor->args[0]);
  const Shape& b = ir::shape_of(ch.anchor->args[1]);
  const Shape& y = ir::as_tensor(ch.anchor->type).shape;
  if (a.size() < 2) return "onednn_hook: an operand of rank " + std::to_string(a.size());
  if (ch.anchor->op == OpCode::Dense) {
    if (b.size() != 2) return "onednn_hook dense: the weight is not [N, K]";
    if (ch.anchor->args.size() == 3 && ch.add) return "onednn_hook dense: a bias and another add";
  } else if (b.size() != 2 || a.size() == 2) {  // a 2-d right operand serves every row of a
    if (a.size() != b.size()) return "onednn_hook matmul: operands of different ranks";
    int64_t bb = 1;
    for (size_t i = 0; i + 2 < b.size(); ++i) bb *= b[i];
    for (size_t i = 0; i + 2 < a.size(); ++i)
      if (a[i] != b[i] && bb != 1) return "onednn_hook matmul: batch dims broadcast in a way oneDNN's matmul does not";
  }
  if (ch.residual_add && (!f32(ch.residual) || ch.residual->kind == ir::ExprKind::Constant ||
                          ir::shape_of(ch.residual) != y))
    return "onednn_hook: the residual " + shape_str(ir::shape_of(ch.residual)) + " is not a tensor of the result's shape " +
           shape_str(y) + " (oneDNN's binary post-op would broadcast it)";
  if (ch.add) {
    Shape bs = ir::shape_of(ch.other);
    while (bs.size() > 1 && bs.front() == 1) bs.erase(bs.begin());
    if (ch.other->kind != ir::ExprKind::Constant || bs != Shape{y.back()} || ir::shape_of(ch.other).size() > y.size())
      return "onednn_hook: the add's operand " + shape_str(ir::shape_of(ch.other)) + " is not a bias of " + std::to_string(y.back());
  }
  return "";
}

// Max pooling whose every window holds an input element (no ceil-mode window past the declared
// padding, no dilation), and global average pooling: between blocked convolutions they keep the
// blocked layout (as BYOC's region does), instead of a reorder to NCHW and back around a native pool.
std::string check_pool(const Match& m) {
  const auto* c = m.nodes.back()->as<ir::CallNode>();
  if (!c || !f32(c->args[0]) || ir::shape_of(c->args[0]).size() != 4) return "onednn_hook pool: float32 NCHW only";
  if (c->op == OpCode::GlobalAvgPool2d) return "";
  const auto& a = c->attrs_as<ops::Pool2dAttrs>();
  const Shape& x = ir::shape_of(c->args[0]);
  const Shape& y = ir::as_tensor(c->type).shape;
  for (int d = 0; d < 2; ++d) {
    if (a.dilation[d] != 1) return "onednn_hook max_pool2d: dilation";
    const int64_t pb = a.padding[d], pe = a.padding[2 + d];
    const int64_t pe_needed = std::max<int64_t>(0, (y[2 + d] - 1) * a.strides[d] + a.kernel[d] - x[2 + d] - pb);
    if (pb >= a.kernel[d] || pe >= a.kernel[d]) return "onednn_hook max_pool2d: padding not smaller than the kernel";
    if (pe_needed > pe) return "onednn_hook max_pool2d: a ceil-mode window past the declared padding";
  }
  return "";
}

// The erf GELU of ONNX exports, as the epilogue (an eltwise post-op) of one of the hook's GEMMs.
std::string check_gelu_erf(const Match& m) {
  ir::Expr x;
  const std::string why = check_erf_gelu(m, &x);
  if (!why.empty()) return "onednn_hook gelu: " + why;
  auto* c = x->as<ir::CallNode>();
  auto* f = c && c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
  auto name = f ? f->attrs.find("Composite") : ir::FuncAttrs::const_iterator();
  if (!f || name == f->attrs.end() || (name->second != "onednn_hook.gemm" && name->second != "onednn_hook.gemm_bias"))
    return "onednn_hook gelu: only as the epilogue of one of its GEMMs without an activation";
  return "";
}

Pattern add_either(const Pattern& x, const Pattern& other) {
  return alt({op(OpCode::Add, {x, other}), op(OpCode::Add, {other, x})});
}

}  // namespace

std::vector<CompositeRule> rules() {
  Pattern conv = alt({op(OpCode::Conv2d, {wildcard(), constant(), constant()}), op(OpCode::Conv2d, {wildcard(), constant()})});
  // SiLU, x * sigmoid(x) in either order, both x the same node (checked): one swish post-op
  // (EfficientNet's activation).
  auto act = [](const Pattern& x) {
    return alt({op(OpCode::Relu, {x}), op(OpCode::Clip, {x}),
                silu(x, "onednn_hook conv2d: a multiply that is not x * sigmoid(x) of the same x")});
  };
  Pattern residual = add_either(conv, wildcard());
  Pattern gemm = alt({op(OpCode::Dense, {wildcard(), constant(), constant()}), op(OpCode::Dense, {wildcard(), constant()}),
                      op(OpCode::MatMul, {wildcard(), wildcard()})});
  Pattern biased = add_either(gemm, constant());
  // A transformer's residual connection after the GEMM's bias: oneDNN's binary add post-op, no
  // pass of its own over the result.
  Pattern residual_gemm = add_either(biased, wildcard());
  auto gemm_act = [](const Pattern& x) { return alt({op(OpCode::Relu, {x}), op(OpCode::Gelu, {x})}); };
  return {{"onednn_hook.conv_add_act", act(residual), check_conv},
          {"onednn_hook.conv_add", residual, check_conv},
          {"onednn_hook.conv_act", act(conv), check_conv},
          {"onednn_hook.conv", conv, check_conv},
          {"onednn_hook.gemm_bias_add", residual_gemm, check_gemm},
          {"onednn_hook.gemm_bias_act", gemm_act(biased), check_gemm},
          {"onednn_hook.gemm_bias", biased, check_gemm},
          {"onednn_hook.gemm_act", gemm_act(gemm), check_gemm},
          {"onednn_hook.gemm", gemm, check_gemm},
          {"onednn_hook.gelu_erf", erf_gelu(), check_gelu_erf},
          {"onednn_hook.pool", alt({op(OpCode::MaxPool2d, {wildcard()}), op(OpCode::GlobalAvgPool2d, {wildcard()})}), check_pool}};
}

}  // namespace sy::backends::onednn_hook
