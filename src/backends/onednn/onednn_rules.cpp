// Composite rules of the oneDNN backend. Each rule's pattern is an anchor (conv2d, dense, matmul,
// batch_norm) with optional post-ops that oneDNN fuses into the anchor's primitive: a residual or
// bias add (sum / binary post-op) and an activation (eltwise post-op). Larger forms come first.
#include "backends/onednn/onednn_rules.h"

#include "backends/onednn/onednn_ops.h"

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

}  // namespace

std::vector<CompositeRule> make_composite_rules() {
  std::vector<CompositeRule> rules;
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
