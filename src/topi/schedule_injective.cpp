// The default schedule: inline what can be inlined, then one parallel, vectorized loop per output.
#include <set>

#include "support/error.h"
#include "tir/functor.h"
#include "topi/topi.h"

namespace sy::topi {

namespace {

// Below this many elements, threads cost more than they save.
constexpr int64_t kParallelMin = 16384;

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
    // When no read walks memory along a reduce axis in its innermost index, the innermost data
    // axis is the contiguous one: loop the reduction outside vector-wide blocks of outputs.
    const auto& raxes = op->reduce_axes();
    bool reduce_inner = false;
    tir::visit_expr(op->body, [&](const tir::Expr& e) {
      if (e->kind != tir::ExprKind::TensorRead || e->operands.empty()) return;
      for (const auto& r : raxes) reduce_inner |= tir::uses_var(e->operands.back(), r.var);
    });
    if (!reduce_inner && op->shape.back() >= g.vector_lanes) {
      auto [outer, inner] = st.split(fused, g.vector_lanes);
      std::vector<te::Axis> order = {outer};
      for (size_t r = 0; r < raxes.size(); ++r) order.push_back(st.reduce_axis(r));
      order.push_back(inner);
      st.reorder(order);
      st.vectorize(inner);
      if (n >= 64 * g.vector_lanes) st.parallel(outer);
      return;
    }
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

}  // namespace

void schedule_injective(GroupSchedule& g) {
  te::Schedule& s = *g.sch;
  std::set<const te::OperationNode*> outs, roots;
  for (const te::Tensor& t : g.outputs) outs.insert(t.op().get());
  // Extern stages take whole buffers: what they read is computed whole, at the root.
  for (te::Stage* st : s.stages())
    if (st->op()->kind == te::OpKind::Extern)
      for (const auto& in : st->op()->extern_inputs) roots.insert(in.get());
  for (te::Stage* st : s.stages()) {
    const te::Operation& op = st->op();
    if (op->kind != te::OpKind::Compute || outs.count(op.get()) || roots.count(op.get())) continue;
    // A reduction cannot be inlined into its consumer; it stays a root stage of its own.
    if (!op->is_reduction()) st->compute_inline();
  }
  for (te::Stage* st : s.stages()) {
    const te::OperationNode* op = st->op().get();
    if (op->kind == te::OpKind::Compute && (outs.count(op) || roots.count(op) || op->is_reduction()))
      if (st->attach() == te::AttachKind::Root) schedule_output(*st, g);
  }
}

}  // namespace sy::topi
