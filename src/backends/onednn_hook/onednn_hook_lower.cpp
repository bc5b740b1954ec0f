// The hook's lowering: each composite of the region becomes a oneDNN primitive call (a stateful
// extern stage: made at load, weights reordered once), the rest of the region's values plain
// tensor expressions, all in one loop-IR kernel that the native pipeline plans and builds.
//
// Layouts: oneDNN's convolutions run fastest on their own layout (layout_for: NHWC with AVX-512,
// nChw8c with AVX2) and pay a reorder on each side of a call on NCHW. The BYOC backend keeps that
// layout inside its regions; so does the hook: every tensor a convolution reads or writes whose
// channels the layout fits is in it ("blocked" here: [N, C/B, H, W, B], NHWC being B = C), the
// region's inputs and results are NCHW (what the native kernels around read), and the reorders
// between the two are loops of the kernel at the region's edges (or where a blocked value meets a
// reader that wants it plain).
#include <unordered_map>
#include <unordered_set>

#include "backends/onednn_hook/onednn_hook.h"
#include "externs/onednn/onednn_externs.h"
#include "ir/visitor.h"
#include "native/plan.h"
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
  explicit Lowering(Layout layout) : L_(layout) {}

  te::Tensor plain(const Value& v) {
    if (!v.blocked) return v.t;
    auto it = plain_.find(v.t.op().get());
    if (it != plain_.end()) return it->second;
    const te::Tensor x = v.t;
    const Shape& s = x.shape();
    const int64_t B = s[4];
    const bool nhwc = s[1] == 1;  // one block of all channels: no division in the index
    te::Tensor y = te::compute({s[0], s[1] * s[4], s[2], s[3]}, [&](const std::vector<tir::Expr>& i) {
      if (nhwc) return x({i[0], tir::int_imm(0), i[2], i[3], i[1]});
      return x({i[0], i[1] / tir::int_imm(B), i[2], i[3], i[1] % tir::int_imm(B)});
    }, numbered("to_nchw", static_cast<int64_t>(stages_.size())));
    stages_.push_back(y);
    to_nchw_[y.op().get()] = tile(B);
    if (nhwc) nhwc_.insert(y.op().get());
    plain_[v.t.op().get()] = y;
    return y;
  }

  te::Tensor blocked(const Value& v) {
    if (v.blocked) return v.t;
    auto it = blocked_.find(v.t.op().get());
    if (it != blocked_.end()) return it->second;
    const te::Tensor x = v.t;
    const Shape& s = x.shape();
    const int64_t B = L_.block(s[1]);
    const bool nhwc = B == s[1];
    te::Tensor y = te::compute({s[0], s[1] / B, s[2], s[3], B}, [&](const std::vector<tir::Expr>& i) {
      if (nhwc) return x({i[0], i[4], i[2], i[3]});
      return x({i[0], i[1] * tir::int_imm(B) + i[4], i[2], i[3]});
    }, numbered("to_blocked", static_cast<int64_t>(stages_.size())));
    stages_.push_back(y);
    to_blocked_[y.op().get()] = tile(B);
    if (nhwc) nhwc_.insert(y.op().get());
    blocked_[v.t.op().get()] = y;
    return y;
  }

  bool blockable(int64_t channels) const { return L_.fits(channels); }
  // The channels a reorder moves together: a vector's worth (or a divisor) of a block's.
  int64_t tile(int64_t block) const {
    for (int64_t f : {L_.lanes, int64_t{8}, int64_t{4}})
      if (f > 1 && f <= block && block % f == 0) return f;
    return block;
  }
  Shape blocked_shape(const Shape& y) const {
    const int64_t B = L_.block(y[1]);
    return {y[0], y[1] / B, y[2], y[3], B};
  }

  // `in_place`: the piece's result may be planned in its residual's storage (sum post-op).
  Value conv(const Chain& ch, const std::unordered_map<const ir::ExprNode*, Value>& in, int site, bool in_place) {
    const ir::CallNode& c = *ch.anchor;
    const Shape& y = ir::as_tensor(c.type).shape;
    const Value& xv = in.at(c.args[0].get());
    const ConvLayouts cl = conv_layouts(c, L_);
    const bool src_blocked = cl.src, dst_blocked = cl.dst;
    const te::Tensor src = src_blocked ? blocked(xv) : plain(xv);
    const te::Tensor w = in.at(c.args[1].get()).t;
    const te::Tensor* bias = c.args.size() > 2 ? &in.at(c.args[2].get()).t : nullptr;
    std::vector<dnnl_ext::ConvPost> posts;
    std::vector<te::Tensor> added;
    if (ch.add) {
      const Value& o = in.at(ch.other.get());
      added.push_back(dst_blocked ? blocked(o) : plain(o));
      posts.push_back({in_place ? dnnl_ext::ConvPost::Sum : dnnl_ext::ConvPost::Add});
    }
    if (ch.act && ch.act->op == OpCode::Relu) posts.push_back({dnnl_ext::ConvPost::Relu});
    if (ch.act && ch.act->op == OpCode::Mul) posts.push_back({dnnl_ext::ConvPost::Silu});  // x * sigmoid(x)
    if (ch.act && ch.act->op == OpCode::Clip) {
      const auto& a = ch.act->attrs_as<ops::ClipAttrs>();
      posts.push_back({dnnl_ext::ConvPost::Clip, a.min, a.max});
    }
    const Shape out = dst_blocked ? blocked_shape(y) : y;
    return {dnnl_ext::conv2d_stage(numbered("conv", site), c, src, w, bias, posts, added, out, L_.nhwc), dst_blocked};
  }

  Value pool(const ir::CallNode& c, const std::unordered_map<const ir::ExprNode*, Value>& in, int site) {
    const Value& xv = in.at(c.args[0].get());
    const Shape& x = ir::shape_of(c.args[0]);
    const Shape& y = ir::as_tensor(c.type).shape;
    // The layout of the input (the primitive is made for it), blocked where the channels allow.
    const bool blocked_io = xv.blocked || blockable(x[1]);
    const te::Tensor src = blocked_io ? blocked(xv) : plain(xv);
    const Shape out = blocked_io ? blocked_shape(y) : y;
    const bool global = c.op == OpCode::GlobalAvgPool2d;
    std::vector<int64_t> kernel, strides, padding;
    if (!global) {
      const auto& a = c.attrs_as<ops::Pool2dAttrs>();
      kernel = a.kernel;
      strides = a.strides;
      padding = {a.padding[0], a.padding[1], 0, 0};
      for (int d = 0; d < 2; ++d)  // the end padding the windows use (more changes nothing for a max)
        padding[2 + d] = std::max<int64_t>(0, (y[2 + d] - 1) * a.strides[d] + a.kernel[d] - x[2 + d] - a.padding[d]);
    }
    return {dnnl_ext::pool2d_stage(numbered("pool", site), global, kernel, strides, padding, src, out, L_.nhwc), blocked_io};
  }

  // `gelu`: an erf-GELU composite that reads only this GEMM's result follows (fused_gelu).
  Value gemm(const Chain& ch, const std::unordered_map<const ir::ExprNode*, Value>& in, int site, bool gelu) {
    const ir::CallNode& c = *ch.anchor;
    const te::Tensor a = plain(in.at(c.args[0].get())), b = plain(in.at(c.args[1].get()));
    const dnnl_ext::GemmForm form = c.op == OpCode::Dense ? dnnl_ext::GemmForm::Dense
                                    : b.shape().size() == 2 && a.shape().size() > 2 ? dnnl_ext::GemmForm::Rows
                                                                                     : dnnl_ext::GemmForm::MatMul;
    te::Tensor bias_t;
    const ir::Expr* bias = c.args.size() > 2 ? &c.args[2] : ch.add ? &ch.other : nullptr;
    if (bias) bias_t = plain(in.at(bias->get()));
    // The activation is the primitive's eltwise post-op: applied to each block of results while
    // in cache, no pass of its own over memory.
    dnnl_ext::MatMulAct act = gelu ? dnnl_ext::kActGeluErf : dnnl_ext::kActNone;
    if (ch.act && ch.act->op == OpCode::Relu) act = dnnl_ext::kActRelu;
    if (ch.act && ch.act->op == OpCode::Gelu)
      act = ch.act->attrs_as<ops::GeluAttrs>().approximate == "tanh" ? dnnl_ext::kActGeluTanh : dnnl_ext::kActGeluErf;
    te::Tensor residual_t;
    if (ch.residual_add) residual_t = plain(in.at(ch.residual.get()));
    const Shape& y = ir::as_tensor(c.type).shape;
    return {dnnl_ext::matmul_stage(numbered("gemm", site), form, a, b, bias ? &bias_t : nullptr, y, act,
                                   ch.residual_add ? &residual_t : nullptr),
            false};
  }

  // An erf-GELU whose GEMM's result has other readers: a loop of the kernel.
  Value gelu(const Value& x, int site) {
    const te::Tensor in = plain(x);
    te::Tensor r = te::compute(in.shape(), [&](const std::vector<tir::Expr>& i) {
      tir::Expr v = in(i);
      return tir::float_imm(0.5) * v * (tir::float_imm(1.0) + tir::call("erf", DType::f32, {v * tir::float_imm(0.70710678118654752)}));
    }, numbered("gelu", site));
    stages_.push_back(r);
    return {r, false};
  }

  // The loops this lowering wrote (reorders, epilogues): parallel over their leading axes.
  void schedule(te::Schedule& s) const {
    for (const te::Tensor& t : stages_) {
      te::Stage& st = s[t];
      if (auto b = to_nchw_.find(t.op().get()); b != to_nchw_.end()) {
        // NCHW from blocked: a row of a tile of channels' pixels at a time (the block, or a
        // vector's worth of NHWC's channels), the channel innermost, so that the reads run along
        // the blocked buffer and the writes along the tile's rows. (Channel by channel, each plane
        // read every 16th float: ResNet-50's 64x112x112 took 0.36 ms; all of NHWC's channels
        // innermost, EfficientNet's 1152x7x7 took 0.13 ms.)
        const te::Axis n = st.leaves()[0], c = st.leaves()[1], h = st.leaves()[2], w = st.leaves()[3];
        auto [cb, ci] = st.split(c, b->second);
        if (nhwc_.count(t.op().get())) {  // by rows: each line of the source read once
          st.reorder({n, h, cb, w, ci});
          st.parallel(st.fuse(n, h));
        } else {
          st.reorder({n, cb, h, w, ci});
          st.parallel(st.fuse(st.fuse(n, cb), h));
        }
        continue;
      }
      if (auto b = to_blocked_.find(t.op().get()); b != to_blocked_.end()) {
        // Blocked from NCHW, the mirror: parallel over rows (NHWC's N x 1 is no parallel
        // extent), a tile of channels' rows read at a time, written a tile of channels per pixel.
        const te::Axis n = st.leaves()[0], cb = st.leaves()[1], h = st.leaves()[2], w = st.leaves()[3], c = st.leaves()[4];
        auto [co, ci] = st.split(c, b->second);
        if (nhwc_.count(t.op().get()))
          st.reorder({n, cb, h, w, co, ci});  // each pixel's channels written in a run
        else
          st.reorder({n, cb, h, co, w, ci});
        st.parallel(st.fuse(st.fuse(n, cb), h));
        continue;
      }
      te::Axis a = st.leaves()[0];
      if (st.leaves().size() > 2) a = st.fuse(a, st.leaves()[1]);
      st.parallel(a);
    }
  }

 private:
  Layout L_;
  std::unordered_map<const te::OperationNode*, te::Tensor> plain_, blocked_;
  std::vector<te::Tensor> stages_;
  // The reorders -> the channels moved together (tile()).
  std::unordered_map<const te::OperationNode*, int64_t> to_nchw_, to_blocked_;
  std::unordered_set<const te::OperationNode*> nhwc_;  // the reorders from and to NHWC
};

}  // namespace

tir::PrimFunc lower_region(const ir::FunctionNode& fn, const std::string& name, const target::Target& target) {
  const Layout layout = layout_for(target, &fn);
  Lowering low(layout);
  std::unordered_map<const ir::ExprNode*, Value> value;
  std::vector<te::Tensor> args;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::TypeNode& t = ir::as_tensor(fn.params[i]->type);
    args.push_back(te::placeholder(t.shape, t.dtype, numbered("p", static_cast<int64_t>(i))));
    value[fn.params[i].get()] = {args.back(), false};
  }
  std::unordered_map<const ir::ExprNode*, std::vector<Value>> tuples;
  auto get = [&](const ir::Expr& e) -> const Value& {
    auto it = value.find(e.get());
    if (it == value.end()) throw Error("onednn_hook: the region reads a reshape or transpose that is not a layout change");
    return it->second;
  };
  // A GEMM whose only reader is an erf-GELU composite, and not a result of the kernel, takes the
  // GELU as its post-op; the GELU's value is then the GEMM's.
  const std::vector<ir::Expr> nodes = ir::post_order(fn.body);
  std::unordered_map<const ir::ExprNode*, std::vector<const ir::CallNode*>> readers;
  for (const ir::Expr& e : nodes)
    if (auto* c = e->as<ir::CallNode>())
      for (const ir::Expr& a : c->args) readers[a.get()].push_back(c);
  std::unordered_map<const ir::ExprNode*, bool> results{{fn.body.get(), true}};
  if (auto* t = fn.body->as<ir::TupleNode>())
    for (const ir::Expr& f : t->fields) results[f.get()] = true;
  auto fused_gelu = [&](const ir::Expr& gemm) {
    auto it = readers.find(gemm.get());
    auto* g = gemm->as<ir::CallNode>();
    return g && !results.count(gemm.get()) && composite_of(*g).rfind("onednn_hook.gemm", 0) == 0 && it != readers.end() &&
           it->second.size() == 1 && composite_of(*it->second[0]) == "onednn_hook.gelu_erf";
  };
  const bool in_place = fn.attrs.count(native::kInPlaceAttr) > 0;
  int site = 0;
  for (const ir::Expr& e : nodes) {
    if (e->kind == ir::ExprKind::Var || e->kind == ir::ExprKind::Function) continue;
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && (c->op == OpCode::Reshape || c->op == OpCode::Transpose)) {
      // The layout changes of a split region's pieces (onednn_hook_split.cpp): NCHW -> blocked is
      // transpose(reshape(x)), blocked -> NCHW reshape(transpose(x)). The inner op is taken with
      // the outer one: a blocked value read as NCHW is the same buffer (the primitive is made for
      // its layout), a value that already is what a change makes is taken as it is.
      const auto* inner = c->args[0]->as<ir::CallNode>();
      if (!inner || !inner->is_op() || (inner->op != OpCode::Reshape && inner->op != OpCode::Transpose) || inner->op == c->op)
        continue;  // an inner op (or none of ours: get() refuses its readers)
      const Value& src = get(inner->args[0]);
      const Shape& from = ir::shape_of(inner->args[0]);
      const Shape& to = ir::as_tensor(c->type).shape;
      const auto perm = [](const ir::CallNode* t) { return t->attrs_as<ops::TransposeAttrs>().perm; };
      const std::vector<int64_t> to_nchw_perm{0, 1, 4, 2, 3}, to_blocked_perm{0, 1, 3, 4, 2};
      if (c->op == OpCode::Reshape && from.size() == 5 && to.size() == 4 && !src.blocked && perm(inner) == to_nchw_perm &&
          to == Shape{from[0], from[1] * from[4], from[2], from[3]}) {
        value[e.get()] = {src.t, true};  // [N, C/B, H, W, B] read as NCHW
      } else if (c->op == OpCode::Transpose && from.size() == 4 && to.size() == 5 && to[4] == layout.block(from[1]) &&
                 perm(c) == to_blocked_perm && ir::as_tensor(inner->type).shape == Shape{from[0], from[1] / to[4], to[4], from[2], from[3]}) {
        value[e.get()] = {low.blocked(src), false};
      } else {
        throw Error("onednn_hook: a reshape and transpose of " + shape_str(from) + " to " + shape_str(to) +
                    " that is not a change between NCHW and the blocked layout");
      }
      continue;
    }
    if (auto* t = e->as<ir::TupleNode>()) {
      for (const ir::Expr& f : t->fields) tuples[e.get()].push_back(get(f));
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
    if (kind->second == "onednn_hook.gelu_erf") {
      const ir::Expr& x = c->args.at(gelu_input(*c));
      value[e.get()] = fused_gelu(x) ? get(x) : low.gelu(get(x), site++);  // fused: the GEMM's post-op
      continue;
    }
    // Inside the composite, its parameters are the call's arguments; its constants (none: the
    // region's weights were lifted to parameters) would be placeholders of their own.
    std::unordered_map<const ir::ExprNode*, Value> inner;
    for (size_t i = 0; i < comp->params.size(); ++i) inner[comp->params[i].get()] = get(c->args[i]);
    const Chain ch = chain_of(comp->body);
    SY_CHECK(ch.anchor) << "onednn_hook composite without an anchor";
    if (kind->second == "onednn_hook.pool")
      value[e.get()] = low.pool(*ch.anchor, inner, site);
    else
      value[e.get()] = ch.anchor->op == OpCode::Conv2d ? low.conv(ch, inner, site, in_place)
                                                       : low.gemm(ch, inner, site, fused_gelu(e));
    ++site;
  }
  std::vector<te::Tensor> outputs;
  if (auto it = tuples.find(fn.body.get()); it != tuples.end())
    for (const Value& v : it->second) outputs.push_back(low.plain(v));
  else
    outputs.push_back(low.plain(get(fn.body)));
  te::Schedule sch(outputs);
  low.schedule(sch);
  std::vector<te::Tensor> all = args;
  all.insert(all.end(), outputs.begin(), outputs.end());
  tir::PrimFunc f = te::lower(sch, all, name);
  f.params_may_alias = in_place;
  return f;
}

}  // namespace sy::backends::onednn_hook
