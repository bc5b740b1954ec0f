// The default schedule: inline what can be inlined, then one parallel, vectorized loop per output.
#include <algorithm>
#include <set>

#include "support/error.h"
#include "tir/functor.h"
#include "topi/nn_util.h"
#include "topi/topi.h"

namespace sy::topi {

namespace {

// Below this many elements, threads cost more than they save.
constexpr int64_t kParallelMin = 16384;
// A reduction of fewer outputs pays for threads from this many multiply-adds: a squeeze-
// excitation's conv of 240 -> 960 channels on one pixel (230,000, its weights 0.9 MB) took
// 48 us on one thread, 19 on two (Zen 4).
constexpr int64_t kParallelWorkMin = 65536;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

void schedule_output(te::Stage& st, const GroupSchedule& g) {
  const te::Operation& op = st.op();
  const size_t nd = op->shape.size();
  if (nd == 0) return;
  // Fuse the data-parallel axes (reduction axes stay inner, in their own loops).
  te::Axis fused = st.axis(0);
  for (size_t d = 1; d < nd; ++d) fused = st.fuse(fused, st.axis(d));
  const int64_t n = numel(op->shape);
  if (op->is_reduction()) {
    // Trailing axes of extent 1 (a 1x1 conv on a 1x1 plane, (1, C, 1, 1)) leave the axis before
    // them the contiguous one.
    int64_t back = 1;
    size_t back_axis = nd;
    for (size_t d = nd; d-- > 0 && back == 1;) back = op->shape[d], back_axis = d;
    // When no read walks memory along a reduce axis in its innermost index, the innermost data
    // axis is the contiguous one: loop the reduction outside vector-wide blocks of outputs. A
    // read that does not depend on that axis is one value for a whole vector of outputs (the
    // pooled pixel of a squeeze-and-excitation conv, kept NHWC: one broadcast per input
    // channel), and a reduce axis of extent 1 walks nothing: neither keeps the outputs scalar
    // (the conv of 48 -> 1152 channels took 0.05 ms so). Both only where the vectors of outputs
    // are whole rows of that axis and every read that depends on it does so in its innermost
    // index (contiguous lanes): otherwise each read counts.
    const auto& raxes = op->reduce_axes();
    const tir::Expr inner_var = back_axis < op->axes.size() ? op->axes[back_axis].var : nullptr;
    std::vector<tir::Expr> reads;
    tir::visit_expr(op->body, [&](const tir::Expr& e) {
      if (e->kind == tir::ExprKind::TensorRead && !e->operands.empty()) reads.push_back(e);
    });
    bool exempt = inner_var && back % g.vector_lanes == 0;
    for (const auto& e : exempt ? reads : std::vector<tir::Expr>{}) {
      bool uses = false;
      for (const auto& x : e->operands) uses |= tir::uses_var(x, inner_var);
      if (uses && !tir::uses_var(e->operands.back(), inner_var)) exempt = false;
    }
    bool reduce_inner = false;
    for (const auto& e : reads) {
      if (exempt && !tir::uses_var(e->operands.back(), inner_var)) continue;
      for (const auto& r : raxes) reduce_inner |= (!exempt || r.extent > 1) && tir::uses_var(e->operands.back(), r.var);
    }
    if (!reduce_inner && back >= g.vector_lanes) {
      auto [outer, inner] = st.split(fused, g.vector_lanes);
      std::vector<te::Axis> order = {outer};
      for (size_t r = 0; r < raxes.size(); ++r) order.push_back(st.reduce_axis(r));
      order.push_back(inner);
      st.reorder(order);
      st.vectorize(inner);
      int64_t work = n;
      for (const auto& r : raxes) work *= r.extent;
      if (n >= 64 * g.vector_lanes || (n >= 2 * g.vector_lanes && work >= kParallelWorkMin)) st.parallel(outer);
      return;
    }
    // A read walks memory along the innermost reduce axis (a row's sum): that axis is a SIMD
    // reduction, lanes of partial sums, instead of one serial chain of dependent adds (a double
    // add's latency per element: 0.13 ms for the 128x768 rows of a layer norm).
    if (reduce_inner && raxes.back().extent >= g.vector_lanes) st.vectorize(st.reduce_axis(raxes.size() - 1));
    if (n >= 64) st.parallel(fused);
    return;
  }
  if (n >= 2 * g.vector_lanes) {
    auto [outer, inner] = st.split(fused, g.vector_lanes);
    st.vectorize(inner);
    if (n >= kParallelMin) st.parallel(outer);
  } else if (n >= kParallelMin) {
    st.parallel(fused);
  }
}

// Elementwise outputs of rank >= 2: the trailing axes whose product first reaches a vector (an
// NCHW plane) become the vector loop and the leading ones the parallel loop, so that per-channel
// operands (bias, batch norm) are scalars of the outer loop instead of gathers through a division
// of the fused index, and a concatenation's per-input selects depend on the outer loop alone.
// by_rows: (N = 1, C, H, W) outputs of W >= a vector and at least a row per core loop over (row,
// channel, column) with the rows parallel (rows_parallel).
bool schedule_planes(te::Stage& st, const GroupSchedule& g, bool by_rows) {
  const te::Operation& op = st.op();
  const size_t nd = op->shape.size();
  if (nd < 2 || op->is_reduction()) return false;
  size_t split = nd;
  int64_t inner_n = 1;
  while (split > 0 && inner_n < g.vector_lanes) inner_n *= op->shape[--split];
  if (split == 0 || inner_n < g.vector_lanes) return false;
  if (by_rows && split == 3 && nn::rows_split_fits(op->shape, g.target->cores)) {
    te::Axis outer = nn::rows_parallel(st);
    auto [wo, wi] = st.split(st.leaves().back(), g.vector_lanes);
    st.vectorize(wi);
    if (numel(op->shape) >= kParallelMin) st.parallel(outer);
    return true;
  }
  te::Axis outer = st.axis(0);
  for (size_t d = 1; d < split; ++d) outer = st.fuse(outer, st.axis(d));
  te::Axis inner = st.axis(split);
  for (size_t d = split + 1; d < nd; ++d) inner = st.fuse(inner, st.axis(d));
  auto [io, ii] = st.split(inner, g.vector_lanes);
  st.vectorize(ii);
  if (numel(op->shape) >= kParallelMin) st.parallel(outer);
  return true;
}

}  // namespace

void schedule_injective(GroupSchedule& g, bool by_rows) {
  te::Schedule& s = *g.sch;
  std::set<const te::OperationNode*> outs, roots;
  int64_t out_numel = 0;
  for (const te::Tensor& t : g.outputs) {
    outs.insert(t.op().get());
    out_numel = std::max(out_numel, numel(t.shape()));
  }
  // Extern stages take whole buffers: what they read is computed whole, at the root.
  for (te::Stage* st : s.stages())
    if (st->op()->kind == te::OpKind::Extern)
      for (const auto& in : st->op()->extern_inputs) roots.insert(in.get());
  // A stage that calls a math function and has fewer elements than the outputs, which read it
  // broadcast, is computed once per element of its own, at the root. Inlined, every output
  // element evaluated it again: a squeeze-excitation's sigmoid of 32 channels, fused with its
  // multiply over a 32x112x112 map, ran 401,408 exps (EfficientNet-B0's eleven excitation
  // kernels: 1.6 of its 13.5 ms on one thread).
  for (te::Stage* st : s.stages()) {
    const te::Operation& op = st->op();
    if (op->kind != te::OpKind::Compute || op->is_reduction() || !op->body || numel(op->shape) * 2 > out_numel)
      continue;
    bool calls = false;
    tir::visit_expr(op->body, [&](const tir::Expr& e) { calls |= e->kind == tir::ExprKind::Call; });
    if (calls) roots.insert(op.get());
  }
  for (te::Stage* st : s.stages()) {
    const te::Operation& op = st->op();
    if (op->kind != te::OpKind::Compute || outs.count(op.get()) || roots.count(op.get())) continue;
    // A reduction cannot be inlined into its consumer; it stays a root stage of its own.
    if (!op->is_reduction()) st->compute_inline();
  }
  for (te::Stage* st : s.stages()) {
    const te::OperationNode* op = st->op().get();
    if (op->kind == te::OpKind::Compute && (outs.count(op) || roots.count(op) || op->is_reduction()))
      if (st->attach() == te::AttachKind::Root && !schedule_planes(*st, g, by_rows)) schedule_output(*st, g);
  }
}

}  // namespace sy::topi
