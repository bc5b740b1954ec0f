// Registration of the nn op implementations (topi/nn_*.cpp) and the helpers they share.
#include <algorithm>
#include <set>

#include "topi/nn_util.h"
#include "topi/topi.h"

namespace sy::topi {

namespace nn {

te::Operation find_stage(const Tensor& root, const std::string& name) {
  std::vector<te::Operation> todo{root.op()};
  std::set<const te::OperationNode*> seen;
  while (!todo.empty()) {
    te::Operation op = todo.back();
    todo.pop_back();
    if (!seen.insert(op.get()).second) continue;
    if (op->kind == te::OpKind::Compute && op->name == name) return op;
    for (const te::Operation& in : op->inputs()) todo.push_back(in);
  }
  return nullptr;
}

bool inline_all_but(GroupSchedule& g, const std::vector<te::Operation>& keep) {
  std::set<const te::Stage*> outs, kept;
  for (const Tensor& t : g.outputs) outs.insert(g.sch->find(t.op().get()));
  for (const te::Operation& k : keep)
    if (k) kept.insert(g.sch->find(k.get()));
  std::vector<te::Stage*> todo;
  for (te::Stage* st : g.sch->stages()) {
    const te::Operation& op = st->op();
    if (op->kind != te::OpKind::Compute || outs.count(st) || kept.count(st)) continue;
    if (op->is_reduction()) return false;
    todo.push_back(st);
  }
  for (te::Stage* st : todo) st->compute_inline();
  return true;
}

te::Axis fuse_leading(te::Stage& st, size_t n) {
  te::Axis a = st.leaves()[0];
  for (size_t d = 1; d < n; ++d) {
    te::Axis next = st.leaves()[1];
    a = st.fuse(a, next);
  }
  return a;
}

te::Axis rows_parallel(te::Stage& st) {
  te::Axis n = st.axis(0), c = st.axis(1), h = st.axis(2);
  st.reorder({n, h, c, st.axis(3)});
  return st.fuse(n, h);
}

bool rows_split_fits(const Shape& shape, int cores) {
  return shape.size() == 4 && shape[0] == 1 && shape[2] >= std::max(2, cores);
}

void schedule_grid_at(te::Schedule& s, te::Stage& out, const te::Axis& at, const te::Operation& grid,
                      const te::Operation& pad, int64_t lanes) {
  te::Stage& d = *s.find(grid.get());
  d.compute_at(out, at);
  te::Stage& p = *s.find(pad.get());
  p.compute_at(out, at);
  // Split by column phases (n, c, rp, cp, i, j): the phases innermost, unrolled inside the vector
  // loop over j, so that its reads x[j * sw + cp] are one interleaved group GCC loads as whole
  // vectors and permutes (one phase per loop, it built each vector element by element).
  const bool col_phases = pad->shape.size() == 6 && pad->shape[3] > 1;
  const auto lv = p.leaves();
  std::vector<te::Axis> row = {lv.back()};  // the row's loops: j, or its vectors and their lanes
  if (pad->shape.back() >= lanes) {
    auto [pwo, pwi] = p.split(lv.back(), lanes);
    row = {pwo, pwi};
  }
  if (col_phases) {
    std::vector<te::Axis> order = {lv[2], lv[4]};
    order.insert(order.end(), row.begin(), row.end());
    order.push_back(lv[3]);
    p.reorder(order);
    p.unroll(lv[3]);
  }
  p.vectorize(row.back());
  auto [qo, qi] = d.split(d.axis(2), lanes);
  d.reorder({qo, qi, d.reduce_axis(0), d.reduce_axis(1)});
  d.unroll(d.reduce_axis(0));
  d.unroll(d.reduce_axis(1));
  d.vectorize(qi);
}

int64_t largest_divisor(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

int64_t block_divisor(int64_t n, int64_t cap, int64_t block) {
  if (n % block != 0) return n;
  return block * largest_divisor(n / block, std::max<int64_t>(1, cap / block));
}

int64_t balanced_divisor(int64_t n, int64_t cap, int64_t units, int cores) {
  const int64_t T = std::max(1, cores);
  for (int64_t d = std::min(n, cap); d >= 1; --d)
    if (n % d == 0 && units * (n / d) % T == 0) return d;
  return largest_divisor(n, cap);
}

// (DenseNet's 3x3 convs to one channel tile on 14x14 planes ran in 7 groups of 2 rows, 4:3 on two
// threads.)
int64_t rows_per_group(int64_t rows, int64_t row_bytes, int64_t units, const target::Target& t) {
  const int64_t T = std::max(1, t.cores);
  int64_t per_group = std::clamp<int64_t>(t.l2_bytes / 4 / row_bytes, 1, rows);
  while (per_group > 1 && units * ((rows + per_group - 1) / per_group) < 2 * T) per_group = (per_group + 1) / 2;
  return balanced_divisor(rows, per_group, units, t.cores);
}

std::vector<int64_t> distinct(const std::vector<int64_t>& v) {
  std::vector<int64_t> out;
  for (int64_t x : v)
    if (x > 0 && std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  SY_CHECK(!out.empty()) << "knob without a positive candidate";
  return out;
}

}  // namespace nn

void register_nn(Registry& r) {
  nn::register_conv(r);
  nn::register_conv_nhwc(r);
  nn::register_concat_nhwc(r);
  nn::register_dense(r);
  nn::register_pool(r);
  nn::register_norm(r);
  nn::register_misc(r);
  nn::register_grid_sample(r);
}

}  // namespace sy::topi
