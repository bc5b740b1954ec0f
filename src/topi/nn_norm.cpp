// Native computes and schedules of the normalisations: batch norm (inference), layer norm,
// instance norm, LRN, softmax and log-softmax. Row-wise ops (layer/instance norm, softmax over the
// last axis) compute their statistics at the row loop of the output: one parallel pass per row.
#include "ops/op.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

// Per-channel parameter p ([C]) read at channel c.
std::vector<Tensor> batch_norm(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::BatchNormAttrs>();
  const Tensor& x = in.at(0);
  require_float(c, x);
  const size_t caxis = x.ndim() >= 2 ? 1 : 0;
  const Tensor &scale = in.at(1), &bias = in.at(2), &mean = in.at(3), &var = in.at(4);
  const DType t = x.dtype();
  return {te::compute(x.shape(), [&](const std::vector<Expr>& i) -> Expr {
    Expr ch = x.ndim() == 0 ? idx(0) : i[caxis];
    Expr k = scale(ch) / tir::sqrt(var(ch) + fconst(t, a.epsilon));
    return (x(i) - mean(ch)) * k + bias(ch);
  }, "batch_norm")};
}

// t (right-aligned, numpy broadcasting) read at the trailing indices `inner` of a normalised block.
Expr read_broadcast(const Tensor& t, const std::vector<Expr>& inner) {
  std::vector<Expr> i;
  const size_t off = inner.size() - t.ndim();
  for (size_t d = 0; d < t.ndim(); ++d) i.push_back(t.shape()[d] == 1 ? idx(0) : inner[off + d]);
  return t(i);
}

std::vector<Tensor> layer_norm(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::LayerNormAttrs>();
  const Tensor& x = in.at(0);
  require_float(c, x);
  if (a.axis < 0 || a.axis >= static_cast<int64_t>(x.ndim())) throw Error("nn.layer_norm: axis out of range");
  const size_t axis = static_cast<size_t>(a.axis), r = x.ndim();
  const DType t = x.dtype();
  const Shape outer(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis));
  int64_t n = 1;
  for (size_t d = axis; d < r; ++d) n *= x.shape()[d];
  auto raxes = [&](const char* nm) {
    std::vector<IterVar> ax;
    for (size_t d = axis; d < r; ++d) ax.push_back(te::reduce_axis(x.shape()[d], nm + std::to_string(d)));
    return ax;
  };
  auto full = [&](const std::vector<Expr>& o, const std::vector<IterVar>& k) {
    std::vector<Expr> i(o.begin(), o.end());
    for (const auto& iv : k) i.push_back(iv.var);
    return i;
  };
  std::vector<IterVar> k1 = raxes("k");
  Tensor sum = te::compute(outer, [&](const std::vector<Expr>& o) { return te::sum(x(full(o, k1)), k1); },
                           "layer_norm_sum");
  std::vector<IterVar> k2 = raxes("q");
  Tensor sq = te::compute(outer, [&](const std::vector<Expr>& o) {
    Expr d = x(full(o, k2)) - sum(o) / fconst(t, double(n));
    return te::sum(d * d, k2);
  }, "layer_norm_sq");
  const bool has_bias = in.size() > 2;
  return {te::compute(x.shape(), [&](const std::vector<Expr>& i) -> Expr {
    std::vector<Expr> o(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(axis));
    std::vector<Expr> inner(i.begin() + static_cast<std::ptrdiff_t>(axis), i.end());
    Expr inv = fconst(t, 1.0) / tir::sqrt(sq(o) / fconst(t, double(n)) + fconst(t, a.epsilon));
    Expr y = (x(i) - sum(o) / fconst(t, double(n))) * inv * read_broadcast(in[1], inner);
    return has_bias ? y + read_broadcast(in[2], inner) : y;
  }, "layer_norm")};
}

std::vector<Tensor> instance_norm(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::EpsilonAttrs>();
  const Tensor& x = in.at(0);
  require_float(c, x);
  if (x.ndim() < 2) throw Error("nn.instance_norm: expects N, C, ... data");
  const size_t r = x.ndim();
  const DType t = x.dtype();
  int64_t n = 1;
  for (size_t d = 2; d < r; ++d) n *= x.shape()[d];
  auto raxes = [&](const char* nm) {
    std::vector<IterVar> ax;
    for (size_t d = 2; d < r; ++d) ax.push_back(te::reduce_axis(x.shape()[d], nm + std::to_string(d)));
    return ax;
  };
  auto full = [&](Expr b, Expr ch, const std::vector<IterVar>& k) {
    std::vector<Expr> i{b, ch};
    for (const auto& iv : k) i.push_back(iv.var);
    return i;
  };
  const Shape nc{x.shape()[0], x.shape()[1]};
  std::vector<IterVar> k1 = raxes("k");
  Tensor sum = te::compute(nc, [&](Expr b, Expr ch) { return te::sum(x(full(b, ch, k1)), k1); }, "instance_norm_sum");
  std::vector<IterVar> k2 = raxes("q");
  Tensor sq = te::compute(nc, [&](Expr b, Expr ch) {
    Expr d = x(full(b, ch, k2)) - sum(b, ch) / fconst(t, double(n));
    return te::sum(d * d, k2);
  }, "instance_norm_sq");
  const Tensor &scale = in.at(1), &bias = in.at(2);
  return {te::compute(x.shape(), [&](const std::vector<Expr>& i) -> Expr {
    Expr k = scale(i[1]) / tir::sqrt(sq(i[0], i[1]) / fconst(t, double(n)) + fconst(t, a.epsilon));
    return (x(i) - sum(i[0], i[1]) / fconst(t, double(n))) * k + bias(i[1]);
  }, "instance_norm")};
}

std::vector<Tensor> lrn(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::LRNAttrs>();
  const Tensor& x = in.at(0);
  require_float(c, x);
  if (x.ndim() < 2) throw Error("nn.lrn: expects N, C, ... data");
  if (a.size < 1) throw Error("nn.lrn: size must be positive");
  const int64_t C = x.shape()[1], before = (a.size - 1) / 2;
  const DType t = x.dtype();
  IterVar k = te::reduce_axis(a.size, "k");
  Tensor sq = te::compute(x.shape(), [&](const std::vector<Expr>& i) {
    std::vector<Expr> j = i;
    Expr ch = i[1] - before + k.var;
    j[1] = clamp(ch, 0, C - 1);
    Expr v = x(j);
    return te::sum(tir::select(tir::logical_and(ch >= 0, ch < C), v * v, fconst(t, 0.0)), {k});
  }, "lrn_sq");
  return {te::compute(x.shape(), [&](const std::vector<Expr>& i) {
    Expr base = fconst(t, a.bias) + fconst(t, a.alpha / static_cast<double>(a.size)) * sq(i);
    return x(i) / tir::call("pow", t, {base, fconst(t, a.beta)});
  }, "lrn")};
}

std::vector<Tensor> softmax_impl(const ir::CallNode& c, const std::vector<Tensor>& in, bool log) {
  const auto& a = c.attrs_as<ops::AxisAttrs>();
  const Tensor& x = in.at(0);
  require_float(c, x);
  const char* name = log ? "log_softmax" : "softmax";
  if (x.ndim() == 0 || a.axis < 0 || a.axis >= static_cast<int64_t>(x.ndim()))
    throw Error(ops::op_name(c.op) + ": axis out of range");
  const size_t axis = static_cast<size_t>(a.axis);
  Shape red = x.shape();
  red.erase(red.begin() + static_cast<std::ptrdiff_t>(axis));
  auto with = [&](const std::vector<Expr>& o, Expr d) {
    std::vector<Expr> i(o.begin(), o.end());
    i.insert(i.begin() + static_cast<std::ptrdiff_t>(axis), d);
    return i;
  };
  IterVar k1 = te::reduce_axis(x.shape()[axis], "k");
  Tensor mx = te::compute(red, [&](const std::vector<Expr>& o) { return te::reduce_max(x(with(o, k1.var)), {k1}); },
                          std::string(name) + "_max");
  IterVar k2 = te::reduce_axis(x.shape()[axis], "q");
  Tensor sum = te::compute(red, [&](const std::vector<Expr>& o) {
    return te::sum(tir::exp(x(with(o, k2.var)) - mx(o)), {k2});
  }, std::string(name) + "_sum");
  return {te::compute(x.shape(), [&](const std::vector<Expr>& i) {
    std::vector<Expr> o = i;
    o.erase(o.begin() + static_cast<std::ptrdiff_t>(axis));
    Expr d = x(i) - mx(o);
    return log ? d - tir::log(sum(o)) : tir::exp(d) / sum(o);
  }, name)};
}

// Rows: the output's first `outer` axes are fused and run in parallel; every reduction stage of
// the group is computed at that loop (one row's statistics at a time); the rest vectorized.
void schedule_rows(GroupSchedule& g, size_t outer) {
  te::Schedule& s = *g.sch;
  if (g.outputs.size() != 1 || outer == 0) return schedule_injective(g);
  te::Stage& out = s[g.outputs[0]];
  std::vector<te::Stage*> reductions;
  for (te::Stage* st : s.stages()) {
    if (st->op()->kind != te::OpKind::Compute || st == &out) continue;
    if (st->op()->is_reduction()) reductions.push_back(st);
    else st->compute_inline();
  }
  const Shape& shp = g.outputs[0].shape();
  const size_t nd = shp.size();
  te::Axis rows = fuse_leading(out, outer);
  int64_t nrows = 1, inner = 1;
  for (size_t d = 0; d < outer; ++d) nrows *= shp[d];
  for (size_t d = outer; d < nd; ++d) inner *= shp[d];
  if (nrows > 1 && nrows * inner >= 4096) out.parallel(rows);
  for (te::Stage* st : reductions) {
    st->compute_at(out, rows);
    // One row's statistic: the innermost reduce loop as a SIMD reduction.
    const auto& raxes = st->op()->reduce_axes();
    if (!raxes.empty() && raxes.back().extent >= g.vector_lanes) st->vectorize(st->reduce_axis(raxes.size() - 1));
  }
  if (nd > outer) {
    te::Axis last = out.leaves().back();
    if (shp.back() >= g.vector_lanes) {
      auto [o, i] = out.split(last, g.vector_lanes);
      out.vectorize(i);
    }
  }
}

}  // namespace

void register_norm(Registry& r) {
  r.add(ops::OpCode::BatchNorm, batch_norm, nullptr);
  r.add(ops::OpCode::LayerNorm, layer_norm, [](GroupSchedule& g) {
          schedule_rows(g, static_cast<size_t>(g.anchor->attrs_as<ops::LayerNormAttrs>().axis));
        });
  r.add(ops::OpCode::InstanceNorm, instance_norm, [](GroupSchedule& g) { schedule_rows(g, 2); });
  r.add(ops::OpCode::LRN, lrn, nullptr);
  auto softmax_schedule = [](GroupSchedule& g) {
    const size_t axis = static_cast<size_t>(g.anchor->attrs_as<ops::AxisAttrs>().axis);
    const size_t nd = g.outputs.empty() ? 0 : g.outputs[0].ndim();
    if (nd >= 2 && axis + 1 == nd) schedule_rows(g, nd - 1);
    else schedule_injective(g);
  };
  r.add(ops::OpCode::Softmax, [](const ir::CallNode& c, const std::vector<Tensor>& in) { return softmax_impl(c, in, false); },
                               softmax_schedule);
  r.add(ops::OpCode::LogSoftmax, [](const ir::CallNode& c, const std::vector<Tensor>& in) { return softmax_impl(c, in, true); },
                                  softmax_schedule);
}

}  // namespace sy::topi::nn
