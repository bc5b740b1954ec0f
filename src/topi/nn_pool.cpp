// Native computes and schedules of 2-D pooling (max, average, Lp; padding, dilation, ceil mode)
// and global pooling. Max and average pools have two implementations: pool2d.plane over the
// flattened padded plane (as conv2d.depthwise_plane) and pool2d.rows, which reads the input
// directly with in-bounds guards (no padded copy), as Lp pools do; the schedule inlines epilogues
// and vectorizes along the output width.
#include <cmath>
#include <limits>

#include "ops/op.h"
#include "support/numbered.h"
#include "target/target.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

// The plane path unrolls the window's taps (see schedule_pool_plane); larger windows keep rows.
constexpr int64_t kPlaneMaxTaps = 64;

// Why a pool cannot run over the flattened plane ("" when it can): max and average of floats
// only (the identity of the padding), and the taps are unrolled.
std::string why_not_plane(const ir::CallNode& c) {
  if (c.op != ops::OpCode::MaxPool2d && c.op != ops::OpCode::AvgPool2d) return "not a max or average pool";
  const DType t = ir::dtype_of(c.args.at(0));
  if (t != DType::f32 && t != DType::f64) return "not f32 or f64";
  const auto& a = c.attrs_as<ops::Pool2dAttrs>();
  if (a.kernel.size() != 2) return "not a 2-D window";
  if (a.kernel[0] * a.kernel[1] > kPlaneMaxTaps) return "more than " + std::to_string(kPlaneMaxTaps) + " taps";
  return "";
}

// pool2d.plane over the flattened plane, pool2d.rows row by row with in-bounds guards.
std::vector<Tensor> pool2d(bool over_plane, const ir::CallNode& c, const std::vector<Tensor>& in) {
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
  // Number of window taps along one axis inside [lo, hi) (the data, or the data plus padding).
  auto taps = [](Expr o, int64_t s, int64_t pad, int64_t K, int64_t d, int64_t lo, int64_t hi) {
    Expr cnt = idx(0);
    for (int64_t k = 0; k < K; ++k) {
      Expr i = o * s - pad + k * d;
      cnt = cnt + tir::select(tir::logical_and(i >= lo, i < hi), idx(1), idx(0));
    }
    return cnt;
  };
  auto avg_count = [&](Expr oh, Expr ow) {
    Expr ch_ = a.count_include_pad ? taps(oh, sh, pt, KH, dh, -pt, H + pb) : taps(oh, sh, pt, KH, dh, 0, H);
    Expr cw_ = a.count_include_pad ? taps(ow, sw, pl, KW, dw, -pl, W + pr) : taps(ow, sw, pl, KW, dw, 0, W);
    return ch_ * cw_;
  };
  if (over_plane) {
    if (std::string why = why_not_plane(c); !why.empty()) throw Error(name + ": not over the plane: " + why);
    // Over the flattened plane, as conv2d.depthwise_plane: the input padded with the reduction's
    // identity (-inf for max, 0 for a sum) and split by the strides' phases, P[n][c][rp][cp][i][j]
    // = x[n][c][i * sh + rp - pt][j * sw + cp - pl], Hq x Wq per phase; tap (rh, rw) of output q =
    // oh * Wq + ow of a grid Wq >= OW wide reads phase (rh * dh % sh, rw * dw % sw) at
    // q + (rh * dh / sh) * Wq + rw * dw / sw, linear in q: every tap is a run of whole vectors over
    // the plane, without a guard, whatever the width and stride. Row by row with in-bounds guards,
    // 3x3 pools ran at 2-4 GFLOP/s (GoogLeNet: 24% of its time in max pools).
    const int64_t Hq = os[2] + (KH - 1) * dh / sh, Wq = os[3] + (KW - 1) * dw / sw;
    const Expr identity = is_max ? tir::reduce_identity(tir::ReduceKind::Max, t) : fconst(t, 0.0);
    Tensor P = te::compute({x.shape()[0], x.shape()[1], sh, sw, Hq, Wq}, [&](const std::vector<Expr>& i) {
      Expr xh = i[4] * sh + i[2] - pt, xw = i[5] * sw + i[3] - pl;
      Expr inside = all_of({xh >= 0, xh < H, xw >= 0, xw < W});
      return tir::select(inside, x(i[0], i[1], clamp(xh, 0, H - 1), clamp(xw, 0, W - 1)), identity);
    }, "pool2d_pad");
    Tensor Y = te::compute({os[0], os[1], (os[2] - 1) * Wq + os[3]}, [&](Expr n, Expr ch, Expr q) {
      Expr th = rh.var * dh, tw = rw.var * dw;
      Expr i = q + th / sh * Wq + tw / sw;
      Expr v = P({n, ch, th % sh, tw % sw, i / Wq, i % Wq});
      return is_max ? te::reduce_max(v, {rh, rw}) : te::sum(v, {rh, rw});
    }, "pool2d_plane");
    if (is_max)
      return {te::compute(os, [&](Expr n, Expr ch, Expr oh, Expr ow) { return Y(n, ch, oh * Wq + ow); }, "max_pool2d")};
    return {te::compute(os, [&](Expr n, Expr ch, Expr oh, Expr ow) {
      Expr count = avg_count(oh, ow);
      return tir::select(count > 0, Y(n, ch, oh * Wq + ow) / tir::cast(t, count), fconst(t, 0.0));
    }, "avg_pool2d")};
  }
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
  return {te::compute(os, [&](Expr n, Expr ch, Expr oh, Expr ow) {
    Expr count = avg_count(oh, ow);
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

// The flattened plane (pool2d's pool2d_plane and pool2d_pad), as conv2d.depthwise_plane's: (n, c)
// in parallel, a block of output rows at a time (schedule_grid_at); the block: the whole plane
// when it and its input fit in half the L1, else as many rows as do (a divisor of OH: no tail).
void schedule_pool_plane(GroupSchedule& g, const te::Operation& plane, const te::Operation& pad) {
  te::Schedule& s = *g.sch;
  const Tensor& anchor = g.anchor_outputs.at(0);
  if (g.outputs.size() != 1 || g.outputs[0].shape() != anchor.shape() || !inline_all_but(g, {plane, pad}))
    return schedule_injective(g);
  te::Stage& out = s[g.outputs[0]];
  const int64_t OH = anchor.shape()[2], OW = anchor.shape()[3], L = g.vector_lanes;
  te::Axis nc = fuse_leading(out, 2);
  out.parallel(nc);
  const int64_t phases = pad->shape[2] * pad->shape[3], Wq = pad->shape[5];
  const int64_t per_row = static_cast<int64_t>(dtype_size(pad->dtype)) * Wq * (1 + phases);
  const int64_t th = largest_divisor(OH, std::max<int64_t>(1, g.target->l1d_bytes / 2 / per_row));
  auto [ohb, ohi] = out.split(out.leaves()[1], th);
  te::Axis ow = out.leaves()[3];
  if (OW >= 2 * L) {
    auto [wo, wi] = out.split(ow, L);
    out.vectorize(wi);
  } else {
    out.vectorize(ow);
  }
  schedule_grid_at(s, out, ohb, plane, pad, L);
}

// The pool's reduction computed per output element inside the group output's loops: channels
// (n, c) in parallel, the output width vectorized (each lane is an independent window).
void schedule_pool(GroupSchedule& g) {
  te::Schedule& s = *g.sch;
  const Tensor& anchor = g.anchor_outputs.at(0);
  const te::Operation plane = find_stage(anchor, "pool2d_plane"), pad = find_stage(anchor, "pool2d_pad");
  if (plane && pad) return schedule_pool_plane(g, plane, pad);
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

// global_avg_pool2d.nhwc: the mean of each channel with the channels innermost, a vector of them
// summed over the plane's pixels; taken in chains that keep nhwc (topi::ChainRole::Joins), where
// the depthwise conv before it gives its result so (EfficientNet's squeeze-and-excitation pools).
int64_t nhwc_pool_lanes(const ir::CallNode& c, const target::Target& t) {
  const auto& x = ir::as_tensor(c.args.at(0)->type);
  return x.dtype == DType::f32 && x.shape.size() == 4 ? nhwc_lanes(x.shape[1], t) : 0;
}

std::vector<Tensor> global_avg_pool_nhwc(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const Tensor& x = in.at(0);
  require_float(c, x);
  const Shape& s = x.shape();
  IterVar rh = te::reduce_axis(s[2], "rh"), rw = te::reduce_axis(s[3], "rw");
  Tensor sum = te::compute(out_shape(c), [&](Expr n, Expr ch, Expr, Expr) { return te::sum(x(n, ch, rh.var, rw.var), {rh, rw}); },
                           "global_avg_pool2d_nhwc_sum");
  return {te::compute(out_shape(c), [&](const std::vector<Expr>& o) { return sum(o) / fconst(x.dtype(), double(s[2] * s[3])); },
                      "global_avg_pool2d")};
}

void schedule_global_avg_pool_nhwc(GroupSchedule& g) {
  te::Schedule& s = *g.sch;
  const te::Operation sum = find_stage(g.anchor_outputs.at(0), "global_avg_pool2d_nhwc_sum");
  const int64_t L = nhwc_pool_lanes(*g.anchor, *g.target);
  if (g.outputs.size() != 1 || !sum || L == 0 || !inline_all_but(g, {sum})) return schedule_injective(g);
  te::Stage& out = s[g.outputs[0]];
  const te::Axis n = out.leaves()[0], c = out.leaves()[1], h = out.leaves()[2], w = out.leaves()[3];
  auto [cb, ci] = out.split(c, L);
  out.reorder({n, cb, h, w, ci});
  const te::Axis par = out.fuse(n, cb);
  out.parallel(par);
  out.vectorize(ci);
  te::Stage& y = *s.find(sum.get());
  y.compute_at(out, par);
  y.reorder({y.reduce_axis(0), y.reduce_axis(1), y.axis(1)});
  y.vectorize(y.axis(1));
}

}  // namespace

void register_pool(Registry& r) {
  auto impl = [](std::string name, bool over_plane) {
    OpImpl i;
    i.name = std::move(name);
    i.compute = [over_plane](const ir::CallNode& c, const std::vector<Tensor>& in, const target::Target&) {
      return pool2d(over_plane, c, in);
    };
    i.schedule = schedule_pool;
    if (over_plane) {
      i.why_not = [](const ir::CallNode& c, const target::Target&) { return why_not_plane(c); };
      // Preferred wherever it applies. Since the padded copy reads a row's column phases as one
      // interleaved group (schedule_grid_at), also at stride 2 over wide rows, where the guards of
      // pool2d.rows had been cheaper than an element-by-element copy: a 3x3/2 max pool of 64
      // 112x112 planes 0.52 ms by rows, 0.16 over the plane (AVX2: 0.90 and 0.17); a 2x2/2 average
      // pool of 256 56x56 planes 0.068 and 0.060 (0.22 and 0.06).
      i.priority = [](const ir::CallNode&, const target::Target&) { return kDefaultPriority + 1; };
    }
    return i;
  };
  for (ops::OpCode op : {ops::OpCode::MaxPool2d, ops::OpCode::AvgPool2d}) {
    r.add(op, impl("pool2d.plane", true));
    r.add(op, impl("pool2d.rows", false));
  }
  r.add(ops::OpCode::LpPool2d, [](const ir::CallNode& c, const std::vector<Tensor>& in, const target::Target&) {
    return pool2d(false, c, in);
  }, schedule_pool);
  r.add(ops::OpCode::GlobalAvgPool2d, global_pool, nullptr);
  OpImpl nhwc;
  nhwc.name = "global_avg_pool2d.nhwc";
  nhwc.compute = global_avg_pool_nhwc;
  nhwc.schedule = schedule_global_avg_pool_nhwc;
  nhwc.why_not = [](const ir::CallNode& c, const target::Target& t) -> std::string {
    return nhwc_pool_lanes(c, t) ? "" : "not f32 with channels in whole vectors";
  };
  nhwc.priority = [](const ir::CallNode&, const target::Target&) { return 1; };
  nhwc.kept_layouts = [](const ir::FunctionNode& fn, const target::Target&) {
    KeptLayoutSupport k;
    if (fn.params.size() != 1) return k;
    k.layout = kNhwcLayout;
    k.params = {0};
    return k;
  };
  nhwc.chain_role = [](const ir::FunctionNode& fn, const target::Target&) {
    return fn.params.size() == 1 ? ChainRole::Joins : ChainRole::None;
  };
  r.add(ops::OpCode::GlobalAvgPool2d, std::move(nhwc));
  r.add(ops::OpCode::GlobalMaxPool2d, global_pool, nullptr);
}

}  // namespace sy::topi::nn
