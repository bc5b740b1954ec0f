// The hook's split of a region into kernels: one per composite (a oneDNN primitive call) and one
// per layout change at the region's edges, so that the tensors between them are planned by the
// native memory planner, in the arena the native kernels share (one kernel per region kept its
// intermediates as temporaries of that kernel, all live until its end). The layout stays
// oneDNN's (layout_for: NHWC or channel-blocked) between the convolutions: a piece's parameters
// and result are the blocked tensors [N, C/B, H, W, B], its body says what they mean (the
// layout changes around the composite), and the lowering (onednn_hook_lower.cpp) calls the
// primitive on them directly.
#include <unordered_map>

#include "backends/onednn_hook/onednn_hook.h"
#include "ir/visitor.h"
#include "native/hooked_regions.h"
#include "native/plan.h"
#include "ops/attrs.h"
#include "support/numbered.h"

namespace sy::backends::onednn_hook {

namespace {

using ops::OpCode;

ir::Expr reshape(ir::Expr x, Shape to) {
  ops::ReshapeAttrs a;
  a.newshape = std::move(to);
  return ir::call(OpCode::Reshape, {std::move(x)}, a);
}

ir::Expr transpose(ir::Expr x, std::vector<int64_t> perm) {
  ops::TransposeAttrs a;
  a.perm = std::move(perm);
  return ir::call(OpCode::Transpose, {std::move(x)}, a);
}

ir::FuncAttrs piece_attrs(const Layout& L) {
  ir::FuncAttrs a;
  a.emplace(native::kLoweredByAttr, "onednn_hook");
  a.emplace("Compiler", "onednn_hook");
  a.emplace(kLayoutAttr, L.nhwc ? "nhwc" : "blocked");  // the region's, which the lowering cannot see
  return a;
}

// A region value in the split: the expression that holds it and whether it is blocked.
struct Held {
  ir::Expr e;
  bool blocked = false;
};

class Splitter {
 public:
  explicit Splitter(Layout layout) : L_(layout) {}

  bool blockable(const ir::Expr& x) const {
    const Shape& s = ir::shape_of(x);
    return s.size() == 4 && L_.fits(s[1]);
  }

  // x [N, C, H, W] as [N, C/B, H, W, B]; and back.
  ir::Expr to_blocked_expr(const ir::Expr& x) const {
    const Shape& s = ir::shape_of(x);
    const int64_t B = L_.block(s[1]);
    return transpose(reshape(x, {s[0], s[1] / B, B, s[2], s[3]}), {0, 1, 3, 4, 2});
  }
  ir::Expr to_nchw_expr(const ir::Expr& xb) const {
    const Shape& s = ir::shape_of(xb);
    return reshape(transpose(xb, {0, 1, 4, 2, 3}), {s[0], s[1] * s[4], s[2], s[3]});
  }

  // A piece that only changes the layout (at the region's edges).
  ir::Expr blocked(const Held& h) {
    if (h.blocked) return h.e;
    auto it = to_blocked_.find(h.e.get());
    if (it != to_blocked_.end()) return it->second;
    ir::Expr p = ir::var("x", h.e->type);
    ir::Expr call = ir::call_function(ir::function({p}, to_blocked_expr(p), piece_attrs(L_)), {h.e});
    return to_blocked_[h.e.get()] = call;
  }
  ir::Expr plain(const Held& h) {
    if (!h.blocked) return h.e;
    auto it = to_nchw_.find(h.e.get());
    if (it != to_nchw_.end()) return it->second;
    ir::Expr p = ir::var("x", h.e->type);
    ir::Expr call = ir::call_function(ir::function({p}, to_nchw_expr(p), piece_attrs(L_)), {h.e});
    return to_nchw_[h.e.get()] = call;
  }

  // The composite call `c` (of the region) as a piece: its activations blocked where the
  // convolution's channels allow, its constants (weights) inside; `then` a composite that reads
  // only c's result and joins its piece (an erf GELU after a GEMM, the GEMM's post-op).
  Held piece(const ir::CallNode& c, const std::unordered_map<const ir::ExprNode*, Held>& held,
             const ir::CallNode* then = nullptr) {
    const auto* comp = c.callee->as<ir::FunctionNode>();
    const Chain ch = chain_of(comp->body);
    const bool conv = ch.anchor && ch.anchor->op == OpCode::Conv2d;
    const bool pool = composite_of(c) == "onednn_hook.pool";
    // The composite's result is blocked when it is a convolution's or a pooling's whose channels
    // the block divides: written NCHW, oneDNN's convolutions fall back to GEMM-based kernels
    // (ResNet-50's stem: 4.5 ms instead of 0.9); a reorder piece makes NCHW where a reader needs it.
    // A convolution's pair of layouts is one oneDNN has a kernel for (conv_layouts).
    const ConvLayouts cl = conv ? conv_layouts(*ch.anchor, L_) : ConvLayouts{};
    const bool out_blocked = conv ? cl.dst : pool && L_.fits(ir::as_tensor(c.type).shape[1]);
    std::vector<ir::Expr> params, args, inner_args;
    int data_param = -1, added_param = -1;  // the piece's parameters of a convolution's data and residual
    for (size_t i = 0; i < c.args.size(); ++i) {
      const ir::Expr& a = c.args[i];
      if (a->kind == ir::ExprKind::Constant) {
        inner_args.push_back(a);
        continue;
      }
      const Held& h = held.at(a.get());
      // In a convolution the data and the added tensor follow the layouts oneDNN runs fastest:
      // blocked where the channels allow (the data) or where the result is (the added tensor).
      const bool is_data = (conv && comp->params[i].get() == ch.anchor->args[0].get()) || pool;
      const bool want_blocked = conv ? (is_data ? cl.src : out_blocked) : pool && (h.blocked || blockable(a));
      ir::Expr arg = want_blocked ? blocked(h) : plain(h);
      ir::Expr p = ir::var(numbered("x", static_cast<int64_t>(params.size())), arg->type);
      if (conv) (is_data ? data_param : added_param) = static_cast<int>(params.size());
      params.push_back(p);
      args.push_back(arg);
      inner_args.push_back(want_blocked ? to_nchw_expr(p) : p);
    }
    ir::Expr body = ir::call_function(c.callee, inner_args);
    if (then) {  // its arguments: the GEMM's result and constants
      std::vector<ir::Expr> then_args = then->args;
      then_args[gelu_input(*then)] = body;
      body = ir::call_function(then->callee, then_args);
    }
    if (out_blocked) body = to_blocked_expr(body);
    ir::FuncAttrs attrs = piece_attrs(L_);
    // A residual the convolution accumulates onto (oneDNN's sum post-op) may share the result's
    // storage when nothing reads it after, not when it is also the convolution's data.
    if (added_param >= 0 && ch.add && args[static_cast<size_t>(added_param)].get() != (data_param >= 0 ? args[static_cast<size_t>(data_param)].get() : nullptr))
      attrs.emplace(native::kInPlaceAttr, std::to_string(added_param));
    return {ir::call_function(ir::function(params, body, attrs), args), out_blocked};
  }

 private:
  Layout L_;
  std::unordered_map<const ir::ExprNode*, ir::Expr> to_blocked_, to_nchw_;
};

}  // namespace

std::optional<ir::Expr> split_region(const ir::FunctionNode& fn, const target::Target& target) {
  Splitter sp(layout_for(target, &fn));
  std::unordered_map<const ir::ExprNode*, Held> held;
  std::vector<ir::Expr> params;
  for (const ir::Expr& p : fn.params) {
    ir::Expr np = ir::var(p->as<ir::VarNode>()->name, p->type);
    params.push_back(np);
    held[p.get()] = {np, false};
  }
  const std::vector<ir::Expr> nodes = ir::post_order(fn.body);
  std::unordered_map<const ir::ExprNode*, std::vector<const ir::CallNode*>> readers;
  for (const ir::Expr& e : nodes)
    if (auto* c = e->as<ir::CallNode>())
      for (const ir::Expr& a : c->args) readers[a.get()].push_back(c);
  // A GEMM read only by an erf-GELU composite (and not a result) shares its piece.
  auto gelu_after = [&](const ir::Expr& e) -> const ir::CallNode* {
    auto it = readers.find(e.get());
    auto* c = e->as<ir::CallNode>();
    if (!c || composite_of(*c).rfind("onednn_hook.gemm", 0) != 0 || it == readers.end() || it->second.size() != 1 ||
        composite_of(*it->second[0]) != "onednn_hook.gelu_erf" || e.get() == fn.body.get())
      return nullptr;
    if (auto* t = fn.body->as<ir::TupleNode>())
      for (const ir::Expr& f : t->fields)
        if (f.get() == e.get()) return nullptr;
    return it->second[0];
  };
  std::unordered_map<const ir::ExprNode*, const ir::ExprNode*> joined;  // the GELU call -> its GEMM's
  for (const ir::Expr& e : nodes) {
    if (e->kind == ir::ExprKind::Var || e->kind == ir::ExprKind::Function || e->kind == ir::ExprKind::Constant) continue;
    if (auto it = joined.find(e.get()); it != joined.end()) {
      held[e.get()] = held.at(it->second);
      continue;
    }
    if (auto* t = e->as<ir::TupleNode>()) {
      std::vector<ir::Expr> fields;
      for (const ir::Expr& f : t->fields) fields.push_back(sp.plain(held.at(f.get())));
      held[e.get()] = {ir::tuple(fields), false};
      continue;
    }
    if (auto* g = e->as<ir::TupleGetItemNode>()) {
      held[e.get()] = {ir::tuple_get_item(held.at(g->tuple.get()).e, g->index), false};
      continue;
    }
    auto* c = e->as<ir::CallNode>();
    auto* comp = c && c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
    if (!comp || !comp->attrs.count("Composite")) return std::nullopt;  // not ours to split: one kernel
    const ir::CallNode* then = gelu_after(e);
    held[e.get()] = sp.piece(*c, held, then);
    if (then) joined[then] = e.get();
  }
  return ir::function(params, sp.plain(held.at(fn.body.get())), fn.attrs);
}

}  // namespace sy::backends::onednn_hook
