// The hook's lowering: each composite of the region becomes a oneDNN primitive call (a stateful
// extern stage: made at load, weights reordered once), the rest of the region's values plain
// tensor expressions, all in one loop-IR kernel that the native pipeline plans and builds.
//
// Layouts: oneDNN's convolutions run fastest on channel-blocked activations (nChw16c with
// AVX-512, nChw8c with AVX2) and pay a reorder on each side of a call on NCHW. The BYOC backend
// keeps the blocked layout inside its regions; so does the hook: every tensor a convolution reads
// or writes whose channels the block divides is blocked, the region's inputs and results are
// NCHW (what the native kernels around read), and the reorders between the two are loops of the
// kernel at the region's edges (or where a blocked value meets a reader that wants it plain).
#include <unordered_map>

#include "backends/onednn_hook/onednn_hook.h"
#include "externs/onednn/onednn_externs.h"
#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"
#include "support/numbered.h"
#include "te/lower.h"
#include "te/schedule.h"

namespace sy::backends::onednn_hook {

namespace {

using ops::OpCode;
namespace dnnl_ext = externs::onednn;

// A value of the region: its tensor, blocked ([N, C/B, H, W, B]) or as the IR types it.
struct Value {
  te::Tensor t;
  bool blocked = false;
};

class Lowering {
 public:
  explicit Lowering(int64_t block) : block_(block) {}

  te::Tensor plain(const Value& v) {
    if (!v.blocked) return v.t;
    auto it = plain_.find(v.t.op().get());
    if (it != plain_.end()) return it->second;
    const te::Tensor x = v.t;
    const Shape& s = x.shape();
    const int64_t B = block_;
    te::Tensor y = te::compute({s[0], s[1] * s[4], s[2], s[3]}, [&](const std::vector<tir::Expr>& i) {
      return x({i[0], i[1] / tir::int_imm(B), i[2], i[3], i[1] % tir::int_imm(B)});
    }, numbered("to_nchw", static_cast<int64_t>(stages_.size())));
    stages_.push_back(y);
    plain_[v.t.op().get()] = y;
    return y;
  }

  te::Tensor blocked(const Value& v) {
    if (v.blocked) return v.t;
    auto it = blocked_.find(v.t.op().get());
    if (it != blocked_.end()) return it->second;
    const te::Tensor x = v.t;
    const Shape& s = x.shape();
    const int64_t B = block_;
    te::Tensor y = te::compute({s[0], s[1] / B, s[2], s[3], B}, [&](const std::vector<tir::Expr>& i) {
      return x({i[0], i[1] * tir::int_imm(B) + i[4], i[2], i[3]});
    }, numbered("to_blocked", static_cast<int64_t>(stages_.size())));
    stages_.push_back(y);
    blocked_[v.t.op().get()] = y;
    return y;
  }

  bool blockable(int64_t channels) const { return block_ > 1 && channels % block_ == 0; }

  Value conv(const Chain& ch, const std::unordered_map<const ir::ExprNode*, Value>& in, int site) {
    const ir::CallNode& c = *ch.anchor;
    const Shape& x = ir::shape_of(c.args[0]);
    const Shape& y = ir::as_tensor(c.type).shape;
    const Value& xv = in.at(c.args[0].get());
    const bool src_blocked = xv.blocked || blockable(x[1]);
    const bool dst_blocked = blockable(y[1]);
    const te::Tensor src = src_blocked ? blocked(xv) : plain(xv);
    const te::Tensor w = in.at(c.args[1].get()).t;
    const te::Tensor* bias = c.args.size() > 2 ? &in.at(c.args[2].get()).t : nullptr;
    std::vector<dnnl_ext::ConvPost> posts;
    std::vector<te::Tensor> added;
    if (ch.add) {
      const Value& o = in.at(ch.other.get());
      added.push_back(dst_blocked ? blocked(o) : plain(o));
      posts.push_back({dnnl_ext::ConvPost::Add});
    }
    if (ch.act && ch.act->op == OpCode::Relu) posts.push_back({dnnl_ext::ConvPost::Relu});
    if (ch.act && ch.act->op == OpCode::Clip) {
      const auto& a = ch.act->attrs_as<ops::ClipAttrs>();
      posts.push_back({dnnl_ext::ConvPost::Clip, a.min, a.max});
    }
    const Shape out = dst_blocked ? Shape{y[0], y[1] / block_, y[2], y[3], block_} : y;
    return {dnnl_ext::conv2d_stage(numbered("conv", site), c, src, w, bias, posts, added, out), dst_blocked};
  }

  Value gemm(const Chain& ch, const std::unordered_map<const ir::ExprNode*, Value>& in, int site) {
    const ir::CallNode& c = *ch.anchor;
    const bool dense = c.op == OpCode::Dense;
    const te::Tensor a = plain(in.at(c.args[0].get())), b = plain(in.at(c.args[1].get()));
    te::Tensor bias_t;
    const ir::Expr* bias = c.args.size() > 2 ? &c.args[2] : ch.add ? &ch.other : nullptr;
    if (bias) bias_t = plain(in.at(bias->get()));
    const Shape& y = ir::as_tensor(c.type).shape;
    te::Tensor r = dnnl_ext::matmul_stage(numbered("gemm", site), dense, a, b, bias ? &bias_t : nullptr, y);
    if (ch.act) {
      // Not one of oneDNN 2.6's matmul post-ops here: an elementwise loop of the same kernel.
      const ir::CallNode& act = *ch.act;
      const bool tanh = act.op == OpCode::Gelu && act.attrs_as<ops::GeluAttrs>().approximate == "tanh";
      r = te::compute(y, [&](const std::vector<tir::Expr>& i) {
        tir::Expr v = r(i);
        if (act.op == OpCode::Relu) return tir::max(v, tir::float_imm(0.0));
        if (tanh) {
          tir::Expr inner = tir::float_imm(0.7978845608028654) * (v + tir::float_imm(0.044715) * v * v * v);
          return tir::float_imm(0.5) * v * (tir::float_imm(1.0) + tir::call("tanh", DType::f32, {inner}));
        }
        return tir::float_imm(0.5) * v * (tir::float_imm(1.0) + tir::call("erf", DType::f32, {v * tir::float_imm(0.70710678118654752)}));
      }, numbered("epilogue", site));
      stages_.push_back(r);
    }
    return {r, false};
  }

  // The loops this lowering wrote (reorders, epilogues): parallel over their leading axes.
  void schedule(te::Schedule& s) const {
    for (const te::Tensor& t : stages_) {
      te::Stage& st = s[t];
      te::Axis a = st.leaves()[0];
      if (st.leaves().size() > 2) a = st.fuse(a, st.leaves()[1]);
      st.parallel(a);
    }
  }

 private:
  int64_t block_;
  std::unordered_map<const te::OperationNode*, te::Tensor> plain_, blocked_;
  std::vector<te::Tensor> stages_;
};

}  // namespace

tir::PrimFunc lower_region(const ir::FunctionNode& fn, const std::string& name, const target::Target& target) {
  // oneDNN's blocked layout for f32 is one vector of the target's ISA: 16 lanes with AVX-512, 8 with AVX2.
  Lowering low(target.vector_lanes());
  std::unordered_map<const ir::ExprNode*, Value> value;
  std::vector<te::Tensor> args;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::TypeNode& t = ir::as_tensor(fn.params[i]->type);
    args.push_back(te::placeholder(t.shape, t.dtype, numbered("p", static_cast<int64_t>(i))));
    value[fn.params[i].get()] = {args.back(), false};
  }
  std::unordered_map<const ir::ExprNode*, std::vector<Value>> tuples;
  int site = 0;
  for (const ir::Expr& e : ir::post_order(fn.body)) {
    if (e->kind == ir::ExprKind::Var || e->kind == ir::ExprKind::Function) continue;
    if (auto* t = e->as<ir::TupleNode>()) {
      for (const ir::Expr& f : t->fields) tuples[e.get()].push_back(value.at(f.get()));
      continue;
    }
    if (auto* g = e->as<ir::TupleGetItemNode>()) {
      value[e.get()] = tuples.at(g->tuple.get()).at(static_cast<size_t>(g->index));
      continue;
    }
    auto* c = e->as<ir::CallNode>();
    auto* comp = c && c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
    auto kind = comp ? comp->attrs.find("Composite") : ir::FuncAttrs::const_iterator();
    if (!comp || kind == comp->attrs.end() || kind->second.rfind("onednn_hook.", 0) != 0)
      throw Error("onednn_hook: the region holds " + (c && c->is_op() ? ops::op_name(c->op) : std::string("a node")) +
                  ", which is not one of its composites");
    // Inside the composite, its parameters are the call's arguments; its constants (none: the
    // region's weights were lifted to parameters) would be placeholders of their own.
    std::unordered_map<const ir::ExprNode*, Value> inner;
    for (size_t i = 0; i < comp->params.size(); ++i) inner[comp->params[i].get()] = value.at(c->args[i].get());
    const Chain ch = chain_of(comp->body);
    SY_CHECK(ch.anchor) << "onednn_hook composite without an anchor";
    value[e.get()] = ch.anchor->op == OpCode::Conv2d ? low.conv(ch, inner, site) : low.gemm(ch, inner, site);
    ++site;
  }
  std::vector<te::Tensor> outputs;
  if (auto it = tuples.find(fn.body.get()); it != tuples.end())
    for (const Value& v : it->second) outputs.push_back(low.plain(v));
  else
    outputs.push_back(low.plain(value.at(fn.body.get())));
  te::Schedule sch(outputs);
  low.schedule(sch);
  std::vector<te::Tensor> all = args;
  all.insert(all.end(), outputs.begin(), outputs.end());
  return te::lower(sch, all, name);
}

}  // namespace sy::backends::onednn_hook
