// Composite rules of the oneDNN backend. Each rule's pattern is an anchor (conv2d, dense, matmul,
// batch_norm) with optional post-ops that oneDNN fuses into the anchor's primitive: a residual or
// bias add (sum / binary post-op) and an activation (eltwise post-op). Larger forms come first.
#include "backends/onednn/onednn_rules.h"

#include "backends/onednn/onednn_ops.h"

#include <cmath>

#include "ops/attrs.h"
#include "ops/op.h"
#include "pattern/idioms.h"

namespace sy::backends::onednn {

using ops::OpCode;
using namespace sy::pattern;

namespace {

// Any activation oneDNN fuses as an eltwise post-op, applied to x.
Pattern activation(const Pattern& x) {
  std::vector<Pattern> alts;
  for (OpCode op : {OpCode::Relu, OpCode::Clip, OpCode::Sigmoid, OpCode::Tanh, OpCode::HardSwish, OpCode::Gelu,
                    OpCode::LeakyRelu, OpCode::Elu, OpCode::Selu, OpCode::Softplus, OpCode::Mish,
                    OpCode::HardSigmoid})
    alts.push_back(op == OpCode::Gelu || op == OpCode::Clip
                       ? pattern::op(op, {x}, CallCheck{[](const ir::CallNode& c) { return check_op(c); },
                                                        "onednn eltwise"})
                       : pattern::op(op, {x}));
  // SiLU, x * sigmoid(x), in either order: both x are the same node (checked), one swish post-op.
  alts.insert(alts.begin(), pattern::silu(x, "onednn silu: not x * sigmoid(x)"));
  return alt(std::move(alts));
}

// add(x, other) in either argument order.
Pattern add_either(const Pattern& x, const Pattern& other) {
  return alt({op(OpCode::Add, {x, other}), op(OpCode::Add, {other, x})});
}

// Checks every matched op, then that each post-op keeps the anchor's shape (the anchor is the
// full-shape operand of an add: oneDNN's sum/binary post-ops broadcast only the other operand).
MatchCheck check_chain(std::initializer_list<OpCode> anchors) {
  std::vector<OpCode> codes(anchors);
  return [codes](const Match& m) -> std::string {
    for (const ir::Expr& n : m.nodes) {
      auto* c = n->as<ir::CallNode>();
      if (!c || !c->is_op()) continue;
      std::string r = check_op(*c);
      if (!r.empty()) return r;
    }
    const ir::CallNode* anchor = nullptr;
    for (const ir::Expr& n : m.nodes) {
      auto* c = n->as<ir::CallNode>();
      if (!c || !c->is_op()) continue;
      for (OpCode code : codes)
        if (c->op == code && !anchor) anchor = c;
    }
    if (!anchor) return "onednn: composite without its anchor op";
    const Shape& s = anchor->type->shape;
    for (const ir::Expr& n : m.nodes) {
      auto* c = n->as<ir::CallNode>();
      if (!c || !c->is_op() || c == anchor) continue;
      if (c->type->shape != s)
        return "onednn " + short_name(c->op) + ": result " + shape_str(c->type->shape) + " is larger than the " +
               short_name(anchor->op) + " output " + shape_str(s) + " (a post-op cannot broadcast it)";
    }
    return "";
  };
}

void add_family(std::vector<CompositeRule>& rules, const std::string& base, const Pattern& core,
                const Pattern& add_other, const std::string& add_name, std::initializer_list<OpCode> anchors) {
  MatchCheck check = check_chain(anchors);
  Pattern with_add = add_either(core, add_other);
  rules.push_back({"onednn." + base + "_" + add_name + "_act", activation(with_add), check});
  rules.push_back({"onednn." + base + "_" + add_name, with_add, check});
  rules.push_back({"onednn." + base + "_act", activation(core), check});
  rules.push_back({"onednn." + base, core, check});
}

const ir::CallNode* only_op(const Match& m, OpCode op, std::string* err) {
  const ir::CallNode* found = nullptr;
  for (const ir::Expr& n : m.nodes)
    if (auto* c = as_op(n, op)) {
      if (found && found != c) {
        *err = "onednn: two " + short_name(op) + " nodes in the match";
        return nullptr;
      }
      found = c;
    }
  if (!found) *err = "onednn: no " + short_name(op) + " in the match";
  return found;
}

bool near(float v, double want) { return std::abs(v - want) <= 1e-3 * std::abs(want); }

std::string check_gelu_erf(const Match& m) {
  std::string err;
  const ir::CallNode* div = only_op(m, OpCode::Div, &err);
  if (!div) return err;
  const ir::CallNode* add = only_op(m, OpCode::Add, &err);
  if (!add) return err;
  float v;
  if (!scalar_constant(div->args[1], &v) || !near(v, std::sqrt(2.0)))
    return "onednn gelu_erf: the divisor is not the scalar sqrt(2)";
  const ir::Expr& one = add->args[0]->kind == ir::ExprKind::Constant ? add->args[0] : add->args[1];
  if (!scalar_constant(one, &v) || v != 1.f) return "onednn gelu_erf: erf(..) + c with c != 1";
  const ir::Expr& x = div->args[0];
  int halves = 0;
  for (const ir::Expr& n : m.nodes) {
    auto* mul = as_op(n, OpCode::Mul);
    if (!mul) continue;
    for (const ir::Expr& a : mul->args) {
      if (a->kind == ir::ExprKind::Constant) {
        if (!scalar_constant(a, &v) || v != 0.5f) return "onednn gelu_erf: a factor other than 0.5";
        ++halves;
      } else if (a->kind != ir::ExprKind::Call || !as_op(a, OpCode::Mul)) {
        if (a != x && !as_op(a, OpCode::Add)) return "onednn gelu_erf: the multiplied value is not the erf's input";
      }
    }
  }
  if (halves != 1) return "onednn gelu_erf: expected one factor 0.5";
  if (ir::dtype_of(x) != DType::f32) return "onednn gelu_erf: dtype " + std::string(dtype_name(ir::dtype_of(x))) + " not supported";
  return "";
}

// LayerNorm written out: d = x - mean(x); y = d / sqrt(mean(d^2) + eps) [* gamma + beta].
Pattern layer_norm_pattern() {
  Pattern x = wildcard();
  Pattern d = op(OpCode::Sub, {x, op(OpCode::ReduceMean, {x})});
  Pattern var = op(OpCode::ReduceMean, {op(OpCode::Pow, {d, constant()})});
  Pattern y = op(OpCode::Div, {d, op(OpCode::Sqrt, {op(OpCode::Add, {var, constant()})})});
  Pattern scaled = op(OpCode::Mul, {y, constant()});
  return alt({op(OpCode::Add, {scaled, constant()}), scaled, y});
}

std::string check_layer_norm(const Match& m) {
  std::string err;
  const ir::CallNode* sub = only_op(m, OpCode::Sub, &err);
  if (!sub) return err;
  const ir::CallNode* div = only_op(m, OpCode::Div, &err);
  if (!div) return err;
  const ir::CallNode* pow = only_op(m, OpCode::Pow, &err);
  if (!pow) return err;
  const ir::CallNode* mean_x = as_op(sub->args[1], OpCode::ReduceMean);
  if (!mean_x || mean_x->args[0] != sub->args[0]) return "onednn layer_norm: the mean is not of the centred value";
  if (div->args[0].get() != static_cast<const ir::ExprNode*>(sub) || pow->args[0].get() != static_cast<const ir::ExprNode*>(sub))
    return "onednn layer_norm: the variance and the division use different centred values";
  float p;
  if (!scalar_constant(pow->args[1], &p) || p != 2.f) return "onednn layer_norm: the variance uses an exponent other than 2";
  const Shape& xs = ir::shape_of(sub->args[0]);
  if (ir::dtype_of(sub->args[0]) != DType::f32)
    return "onednn layer_norm: dtype " + std::string(dtype_name(ir::dtype_of(sub->args[0]))) + " not supported";
  // Both means reduce the same trailing axes, keeping dims.
  auto axes_ok = [&](const ir::CallNode* mean) {
    const auto& a = mean->attrs_as<ops::ReduceAttrs>();
    if (!a.keepdims || a.axes.empty()) return false;
    for (size_t i = 0; i < a.axes.size(); ++i)
      if (a.axes[i] != static_cast<int64_t>(xs.size() - a.axes.size() + i)) return false;
    return true;
  };
  const ir::CallNode* mean_v = nullptr;
  for (const ir::Expr& n : m.nodes)
    if (auto* c = as_op(n, OpCode::ReduceMean); c && c != mean_x) mean_v = c;
  if (!mean_v || !axes_ok(mean_x) || !axes_ok(mean_v) ||
      mean_x->attrs_as<ops::ReduceAttrs>().axes != mean_v->attrs_as<ops::ReduceAttrs>().axes)
    return "onednn layer_norm: the means do not reduce the same trailing axes with keepdims";
  const size_t axis = xs.size() - mean_x->attrs_as<ops::ReduceAttrs>().axes.size();
  const Shape norm(xs.begin() + static_cast<std::ptrdiff_t>(axis), xs.end());
  // eps, gamma, beta: constants covering exactly the normalised axes.
  for (const ir::Expr& n : m.nodes) {
    auto* c = n->as<ir::CallNode>();
    if (!c || !c->is_op()) continue;
    if (c->op == OpCode::Add && as_op(c->args[0], OpCode::ReduceMean)) {
      float eps;
      if (!scalar_constant(c->args[1], &eps)) return "onednn layer_norm: epsilon is not a scalar constant";
    } else if (c->op == OpCode::Mul || c->op == OpCode::Add) {
      const ir::Expr& k = c->args[1];
      Shape ks = ir::shape_of(k);
      while (!ks.empty() && ks.front() == 1 && ks.size() > norm.size()) ks.erase(ks.begin());
      if (ks != norm) return "onednn layer_norm: scale/shift of shape " + shape_str(ir::shape_of(k)) +
                             " do not cover the normalised axes " + shape_str(norm);
    }
  }
  return "";
}

}  // namespace

std::vector<CompositeRule> make_composite_rules() {
  std::vector<CompositeRule> rules;
  // Written-out forms oneDNN computes with one primitive (first: their interior adds/muls must
  // not be claimed as post-ops of something else).
  rules.push_back({"onednn.layer_norm", layer_norm_pattern(), check_layer_norm});
  rules.push_back({"onednn.gelu_erf", erf_gelu(), check_gelu_erf});  // GELU as exporters spell it
  // conv2d(x, w[, b]) [+ residual or per-channel constant] [activation]
  Pattern conv = alt({op(OpCode::Conv2d, {wildcard(), constant(), constant()}),
                      op(OpCode::Conv2d, {wildcard(), constant()})});
  add_family(rules, "conv2d", conv, wildcard(), "add", {OpCode::Conv2d});
  // dense(x, w[, b]) [+ bias or residual] [activation]
  Pattern dense = alt({op(OpCode::Dense, {wildcard(), constant(), constant()}),
                       op(OpCode::Dense, {wildcard(), constant()})});
  add_family(rules, "dense", dense, wildcard(), "add", {OpCode::Dense});
  // matmul(a, b) [+ bias or residual] [activation]
  Pattern mm = op(OpCode::MatMul, {wildcard(), wildcard()});
  add_family(rules, "matmul", mm, wildcard(), "add", {OpCode::MatMul});
  // batch_norm(x, constants) [activation] (inference batch-norm that no pass folded)
  Pattern bn = op(OpCode::BatchNorm, {wildcard(), constant(), constant(), constant(), constant()});
  MatchCheck bn_check = check_chain({OpCode::BatchNorm});
  rules.push_back({"onednn.batch_norm_act", activation(bn), bn_check});
  rules.push_back({"onednn.batch_norm", bn, bn_check});
  return rules;
}

}  // namespace sy::backends::onednn
