// Native computes and schedules of 2-D pooling (max, average, Lp; padding, dilation, ceil mode)
// and global pooling. Windows read the input directly with in-bounds guards (no padded copy);
// the schedule inlines epilogues and vectorizes along the output width.
#include <cmath>
#include <limits>

#include "ops/op.h"
#include "support/numbered.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

std::vector<Tensor> pool2d(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::Pool2dAttrs>();
  const std::string& name = ops::op_name(c.op);
  const Tensor& x = in.at(0);
  if (a.kernel.size() != 2 || a.strides.size() != 2 || a.padding.size() != 4 || a.dilation.size() != 2)
    throw Error(name + ": expects 2 kernel sizes, 2 strides, 4 paddings and 2 dilations");
  const bool is_max = c.op == ops::OpCode::MaxPool2d, is_avg = c.op == ops::OpCode::AvgPool2d;
  if (!is_max) require_float(c, x);
  if (c.op == ops::OpCode::LpPool2d && a.p <= 0) throw Error(name + ": p must be positive");
  const int64_t H = x.shape()[2], W = x.shape()[3];
  const int64_t KH = a.kernel[0], KW = a.kernel[1], sh = a.strides[0], sw = a.strides[1];
  const int64_t pt = a.padding[0], pl = a.padding[1], pb = a.padding[2], pr = a.padding[3];
  const int64_t dh = a.dilation[0], dw = a.dilation[1];
  const DType t = x.dtype();
  const Shape& os = out_shape(c);
  IterVar rh = te::reduce_axis(KH, "rh"), rw = te::reduce_axis(KW, "rw");
  auto window = [&](Expr n, Expr ch, Expr oh, Expr ow, Expr& inside, Expr& at) {
    Expr ih = oh * sh - pt + rh.var * dh, iw = ow * sw - pl + rw.var * dw;
    std::vector<Expr> conds;
    if (pt > 0 || (os[2] - 1) * sh - pt + (KH - 1) * dh >= H) conds = {ih >= 0, ih < H};
    if (pl > 0 || (os[3] - 1) * sw - pl + (KW - 1) * dw >= W) {
      conds.push_back(iw >= 0);
      conds.push_back(iw < W);
    }
    inside = conds.empty() ? Expr() : all_of(conds);
    at = conds.empty() ? x(n, ch, ih, iw) : x(n, ch, clamp(ih, 0, H - 1), clamp(iw, 0, W - 1));
  };
  if (is_max) {
    return {te::compute(os, [&](Expr n, Expr ch, Expr oh, Expr ow) {
      Expr inside, v;
      window(n, ch, oh, ow, inside, v);
      if (inside) v = tir::select(inside, v, tir::reduce_identity(tir::ReduceKind::Max, t));
      return te::reduce_max(v, {rh, rw});
    }, "max_pool2d")};
  }
  const double p = static_cast<double>(a.p);
  Tensor acc = te::compute(os, [&](Expr n, Expr ch, Expr oh, Expr ow) {
    Expr inside, v;
    window(n, ch, oh, ow, inside, v);
    if (!is_avg) v = a.p == 1 ? tir::abs(v) : a.p == 2 ? v * v : tir::call("pow", t, {tir::abs(v), fconst(t, p)});
    if (inside) v = tir::select(inside, v, fconst(t, 0.0));
    return te::sum(v, {rh, rw});
  }, is_avg ? "avg_pool2d_sum" : "lp_pool2d_sum");
  if (!is_avg) {
    return {te::compute(os, [&](const std::vector<Expr>& i) {
      return a.p == 1 ? acc(i) : a.p == 2 ? tir::sqrt(acc(i)) : tir::call("pow", t, {acc(i), fconst(t, 1.0 / p)});
    }, "lp_pool2d")};
  }
  // Number of window taps along one axis inside [lo, hi) (the data, or the data plus padding).
  auto taps = [](Expr o, int64_t s, int64_t pad, int64_t K, int64_t d, int64_t lo, int64_t hi) {
    Expr cnt = idx(0);
    for (int64_t k = 0; k < K; ++k) {
      Expr i = o * s - pad + k * d;
      cnt = cnt + tir::select(tir::logical_and(i >= lo, i < hi), idx(1), idx(0));
    }
    return cnt;
  };
  return {te::compute(os, [&](Expr n, Expr ch, Expr oh, Expr ow) {
    Expr ch_ = a.count_include_pad ? taps(oh, sh, pt, KH, dh, -pt, H + pb) : taps(oh, sh, pt, KH, dh, 0, H);
    Expr cw_ = a.count_include_pad ? taps(ow, sw, pl, KW, dw, -pl, W + pr) : taps(ow, sw, pl, KW, dw, 0, W);
    Expr count = ch_ * cw_;
    return tir::select(count > 0, acc(n, ch, oh, ow) / tir::cast(t, count), fconst(t, 0.0));
  }, "avg_pool2d")};
}

std::vector<Tensor> global_pool(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const Tensor& x = in.at(0);
  require_float(c, x);
  const bool is_max = c.op == ops::OpCode::GlobalMaxPool2d;
  // One reduce axis over the flattened window, so that the sum is one contiguous run per channel
  // that the schedule vectorizes (partial sums in lanes); over H then W, a 14x14 plane was 196
  // dependent scalar adds per channel (50 us for 480 channels).
  int64_t S = 1;
  for (size_t d = 2; d < x.ndim(); ++d) S *= x.shape()[d];
  std::vector<IterVar> k{te::reduce_axis(S, "k")};
  const Shape& os = out_shape(c);
  auto read = [&](const std::vector<Expr>& o) {
    std::vector<Expr> i{o[0], o[1]};
    Expr rest = k[0].var;
    for (size_t d = x.ndim(); d-- > 2;) {
      const Expr ext = tir::const_of(tir::kIndexType, static_cast<double>(x.shape()[d]));
      i.insert(i.begin() + 2, d == 2 ? rest : rest % ext);
      rest = rest / ext;
    }
    return x(i);
  };
  const DType t = x.dtype();
  if (is_max)
    return {te::compute(os, [&](const std::vector<Expr>& o) { return te::reduce_max(read(o), k); }, "global_max_pool2d")};
  Tensor sum = te::compute(os, [&](const std::vector<Expr>& o) { return te::sum(read(o), k); }, "global_avg_pool2d_sum");
  return {te::compute(os, [&](const std::vector<Expr>& o) { return sum(o) / fconst(t, double(S)); }, "global_avg_pool2d")};
}

// The pool's reduction computed per output element inside the group output's loops: channels
// (n, c) in parallel, the output width vectorized (each lane is an independent window).
void schedule_pool(GroupSchedule& g) {
  te::Schedule& s = *g.sch;
  const Tensor& anchor = g.anchor_outputs.at(0);
  te::Operation red;
  for (te::Stage* st : s.stages())
    if (st->op()->kind == te::OpKind::Compute && st->op()->is_reduction()) {
      if (red) return schedule_injective(g);  // more than one reduction: keep it simple
      red = st->op();
    }
  if (g.outputs.size() != 1 || !red || g.outputs[0].shape() != anchor.shape() || anchor.ndim() != 4)
    return schedule_injective(g);
  // A reduction that is the output itself gets a local copy to compute at the output's loops.
  if (red.get() == g.outputs[0].op().get()) red = s.cache_write(g.outputs[0]).op();
  if (!inline_all_but(g, {red})) return schedule_injective(g);
  te::Stage& out = s[g.outputs[0]];
  te::Stage& r = *s.find(red.get());
  const Shape& shp = anchor.shape();
  te::Axis nc = fuse_leading(out, 2);
  if (shp[0] * shp[1] > 1) out.parallel(nc);
  te::Axis oh = out.leaves()[1], ow = out.leaves()[2];
  const int64_t lanes = g.vector_lanes;
  if (shp[3] >= lanes) {
    auto [wo, wi] = out.split(ow, lanes);
    r.compute_at(out, wo);
    // Window loops outside, the lanes of the output row inside (vectorized).
    te::Stage& rs = r;
    te::Axis rw = rs.leaves()[3];
    rs.reorder({rs.reduce_axis(0), rs.reduce_axis(1), rw});
    rs.vectorize(rs.leaves().back());
    out.vectorize(wi);
  } else {
    r.compute_at(out, oh);
    te::Stage& rs = r;
    te::Axis rw = rs.leaves()[3];
    rs.reorder({rs.reduce_axis(0), rs.reduce_axis(1), rw});
  }
}

}  // namespace

void register_pool(Registry& r) {
  r.add(ops::OpCode::MaxPool2d, pool2d, schedule_pool);
  r.add(ops::OpCode::AvgPool2d, pool2d, schedule_pool);
  r.add(ops::OpCode::LpPool2d, pool2d, schedule_pool);
  r.add(ops::OpCode::GlobalAvgPool2d, global_pool, nullptr);
  r.add(ops::OpCode::GlobalMaxPool2d, global_pool, nullptr);
}

}  // namespace sy::topi::nn
