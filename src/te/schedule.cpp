#include "te/schedule.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <unordered_set>

#include "tir/functor.h"

namespace sy::te {

namespace {

Axis make_axis(Expr var, int64_t extent, bool reduce) {
  auto a = std::make_shared<AxisNode>();
  a->var = std::move(var);
  a->extent = extent;
  a->reduce = reduce;
  return a;
}

}  // namespace

// ---------------------------------------------------------------- Stage

Stage::Stage(Schedule* owner, Operation op) : owner_(owner), op_(op), origin_(std::move(op)) {
  for (const auto& iv : op_->axes) roots_.push_back(make_axis(iv.var, iv.extent, false));
  for (const auto& iv : op_->reduce_axes()) roots_.push_back(make_axis(iv.var, iv.extent, true));
  leaves_ = roots_;
}

Axis Stage::axis(size_t d) const {
  if (d >= op_->axes.size())
    throw Error("schedule: " + name() + " has " + std::to_string(op_->axes.size()) + " axes, no axis " + std::to_string(d));
  return roots_[d];
}

Axis Stage::reduce_axis(size_t r) const {
  const size_t nd = op_->axes.size();
  if (nd + r >= roots_.size())
    throw Error("schedule: " + name() + " has " + std::to_string(roots_.size() - nd) + " reduce axes, no reduce axis " + std::to_string(r));
  return roots_[nd + r];
}

std::string Stage::axis_name(const Axis& a) const { return a->var->name; }

void Stage::record(std::string step) { owner_->trace_.push_back(std::move(step)); }

void Stage::check_loop_schedulable(const char* prim) const {
  if (op_->kind != OpKind::Compute)
    throw Error(std::string("schedule: ") + prim + " on " + name() + ", which is not a compute stage");
  if (attach_ == AttachKind::Inline)
    throw Error(std::string("schedule: ") + prim + " on " + name() + ", which is inlined");
}

void Stage::check_leaf(const Axis& a, const char* prim) const {
  check_loop_schedulable(prim);
  if (!a || std::find(leaves_.begin(), leaves_.end(), a) == leaves_.end())
    throw Error(std::string("schedule: ") + prim + " on " + name() + ": axis " + (a ? axis_name(a) : "<null>") +
                " is not a current loop of this stage");
}

std::pair<Axis, Axis> Stage::split(Axis a, int64_t factor) {
  check_leaf(a, "split");
  if (factor <= 0) throw Error("schedule: split of " + name() + "." + axis_name(a) + " by non-positive factor " + std::to_string(factor));
  const int64_t f = std::min(factor, a->extent);
  Axis outer = make_axis(tir::var(a->var->name + ".outer"), (a->extent + f - 1) / f, a->reduce);
  Axis inner = make_axis(tir::var(a->var->name + ".inner"), f, a->reduce);
  relations_.push_back({AxisRelation::Split, a, outer, inner, factor});
  auto it = std::find(leaves_.begin(), leaves_.end(), a);
  it = leaves_.erase(it);
  leaves_.insert(it, {outer, inner});
  record("split " + name() + " " + axis_name(a) + " " + std::to_string(factor));
  return {outer, inner};
}

std::tuple<Axis, Axis, Axis, Axis> Stage::tile(Axis x, Axis y, int64_t fx, int64_t fy) {
  auto [xo, xi] = split(x, fx);
  auto [yo, yi] = split(y, fy);
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

Axis Stage::fuse(Axis outer, Axis inner) {
  check_leaf(outer, "fuse");
  check_leaf(inner, "fuse");
  auto it = std::find(leaves_.begin(), leaves_.end(), outer);
  if (it + 1 == leaves_.end() || *(it + 1) != inner)
    throw Error("schedule: fuse on " + name() + ": " + axis_name(outer) + " and " + axis_name(inner) +
                " are not adjacent loops (outer first)");
  if (outer->reduce != inner->reduce)
    throw Error("schedule: fuse on " + name() + ": cannot fuse a reduce axis with a data-parallel axis");
  Axis fused = make_axis(tir::var(axis_name(outer) + "." + axis_name(inner) + ".fused"), outer->extent * inner->extent, outer->reduce);
  relations_.push_back({AxisRelation::Fuse, fused, outer, inner, 0});
  it = leaves_.erase(it, it + 2);
  leaves_.insert(it, fused);
  record("fuse " + name() + " " + axis_name(outer) + " " + axis_name(inner));
  return fused;
}

void Stage::reorder(const std::vector<Axis>& order) {
  std::vector<size_t> pos;
  std::string step = "reorder " + name();
  for (const auto& a : order) {
    check_leaf(a, "reorder");
    size_t p = static_cast<size_t>(std::find(leaves_.begin(), leaves_.end(), a) - leaves_.begin());
    if (std::find(pos.begin(), pos.end(), p) != pos.end())
      throw Error("schedule: reorder on " + name() + " names " + axis_name(a) + " twice");
    pos.push_back(p);
    step.append(" ").append(axis_name(a));
  }
  std::vector<size_t> sorted = pos;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Axis> next = leaves_;
  for (size_t i = 0; i < order.size(); ++i) next[sorted[i]] = order[i];
  leaves_ = std::move(next);
  record(step);
}

void Stage::set_kind(const Axis& a, tir::ForKind k, const char* prim) {
  check_leaf(a, prim);
  if (k == tir::ForKind::Parallel && a->reduce)
    throw Error("schedule: parallel on " + name() + ": " + axis_name(a) + " is a reduce axis");
  a->kind = k;
  record(std::string(prim) + " " + name() + " " + axis_name(a));
}

void Stage::vectorize(const Axis& a) { set_kind(a, tir::ForKind::Vectorized, "vectorize"); }
void Stage::unroll(const Axis& a) { set_kind(a, tir::ForKind::Unrolled, "unroll"); }
void Stage::parallel(const Axis& a) { set_kind(a, tir::ForKind::Parallel, "parallel"); }

void Stage::compute_inline() {
  if (op_->kind != OpKind::Compute)
    throw Error("schedule: compute_inline on " + name() + ", which is not a compute stage");
  if (op_->is_reduction()) throw Error("schedule: compute_inline on " + name() + ", a reduction");
  for (const auto& t : owner_->outputs_)
    if (owner_->find(t.op().get()) == this)
      throw Error("schedule: compute_inline on " + name() + ", an output of the schedule");
  attach_ = AttachKind::Inline;
  attach_stage_ = nullptr;
  attach_axis_ = nullptr;
  record("compute_inline " + name());
}

void Stage::compute_at(Stage& consumer, const Axis& a) {
  if (op_->kind != OpKind::Compute)
    throw Error("schedule: compute_at on " + name() + ", which is not a compute stage");
  if (&consumer == this) throw Error("schedule: compute_at of " + name() + " at itself");
  consumer.check_leaf(a, "compute_at");
  for (const auto& t : owner_->outputs_)
    if (owner_->find(t.op().get()) == this)
      throw Error("schedule: compute_at on " + name() + ", an output of the schedule");
  attach_ = AttachKind::At;
  attach_stage_ = &consumer;
  attach_axis_ = a;
  record("compute_at " + name() + " " + consumer.name() + " " + consumer.axis_name(a));
}

void Stage::compute_root() {
  if (op_->kind == OpKind::Placeholder) throw Error("schedule: compute_root on " + name() + ", a placeholder");
  attach_ = AttachKind::Root;
  attach_stage_ = nullptr;
  attach_axis_ = nullptr;
  record("compute_root " + name());
}

void Stage::cover(size_t d) {
  if (d >= op_->shape.size()) throw Error("schedule: cover of dimension " + std::to_string(d) + " of " + name());
  if (cover_.size() <= d) cover_.resize(d + 1, false);
  cover_[d] = true;
  record("cover " + name() + " " + std::to_string(d));
}

// ---------------------------------------------------------------- Schedule

Schedule::Schedule(const std::vector<Tensor>& outputs) : outputs_(outputs) {
  std::unordered_set<const void*> seen;
  std::function<void(const Operation&)> visit = [&](const Operation& op) {
    if (!seen.insert(op.get()).second) return;
    for (const auto& in : op->inputs()) visit(in);
    stages_.push_back(std::make_unique<Stage>(this, op));
  };
  for (const auto& t : outputs) {
    if (!t.op()) throw Error("schedule: an output tensor is undefined");
    visit(t.op());
  }
}

Stage* Schedule::find(const OperationNode* op) const {
  for (const auto& s : stages_)
    if (s->op_.get() == op || s->origin_.get() == op) return s.get();
  return nullptr;
}

Stage& Schedule::operator[](const Tensor& t) { return (*this)[t.op()]; }

Stage& Schedule::operator[](const Operation& op) {
  Stage* s = find(op.get());
  if (!s) throw Error("schedule: " + (op ? op->name : std::string("<null>")) + " is not part of this schedule");
  return *s;
}

std::vector<Stage*> Schedule::stages() const {
  std::vector<Stage*> out;
  for (const auto& s : stages_) out.push_back(s.get());
  return out;
}

Tensor Schedule::cache_write(const Tensor& t) {
  Stage& st = (*this)[t];
  if (st.op_->kind != OpKind::Compute) throw Error("schedule: cache_write of " + st.name() + ", which is not a compute stage");
  if (st.op_ != st.origin_) throw Error("schedule: cache_write of " + st.name() + " twice");
  if (!st.relations_.empty() || st.attach_ != AttachKind::Root)
    throw Error("schedule: cache_write of " + st.name() + " must come before other primitives on it");
  const Operation& op = st.op_;
  // The cache computes the original body over fresh axes.
  auto cache = std::make_shared<OperationNode>(*op);
  cache->name = op->name + ".local";
  tir::VarMap m;
  for (auto& iv : cache->axes) {
    Expr v = tir::var(iv.var->name + ".c");
    m[iv.var.get()] = v;
    iv.var = v;
  }
  cache->body = tir::substitute(op->body, m);
  Tensor cache_t(cache);
  // The original stage now copies the cache out.
  auto copy = std::make_shared<OperationNode>(*op);
  std::vector<Expr> idx;
  for (auto& iv : copy->axes) {
    iv.var = tir::var(iv.var->name);
    idx.push_back(iv.var);
  }
  copy->body = cache_t(idx);
  st.op_ = copy;
  st.roots_.clear();
  for (const auto& iv : copy->axes) st.roots_.push_back(make_axis(iv.var, iv.extent, false));
  st.leaves_ = st.roots_;
  auto pos = std::find_if(stages_.begin(), stages_.end(), [&](const auto& p) { return p.get() == &st; });
  stages_.insert(pos, std::make_unique<Stage>(this, cache));
  trace_.push_back("cache_write " + op->name);
  return cache_t;
}

// ---------------------------------------------------------------- Knobs

int64_t Knobs::define(const std::string& name, std::vector<int64_t> candidates) {
  if (candidates.empty()) throw Error("knobs: " + name + " has no candidate values");
  auto it = std::find_if(space_.begin(), space_.end(), [&](const Knob& k) { return k.name == name; });
  if (it == space_.end()) {
    space_.push_back({name, candidates});
    it = space_.end() - 1;
  }
  auto v = values_.find(name);
  if (v == values_.end()) return it->candidates.front();
  if (std::find(it->candidates.begin(), it->candidates.end(), v->second) == it->candidates.end())
    throw Error("knobs: " + name + " = " + std::to_string(v->second) + " is not one of its candidates");
  return v->second;
}

void Knobs::set(const std::string& name, int64_t value) { values_[name] = value; }

int64_t Knobs::space_size() const {
  int64_t n = 1;
  for (const auto& k : space_) n *= static_cast<int64_t>(k.candidates.size());
  return n;
}

std::string Knobs::to_string() const {
  std::string s;
  for (const auto& k : space_) {
    auto v = values_.find(k.name);
    s += (s.empty() ? "" : " ") + k.name + "=" + std::to_string(v == values_.end() ? k.candidates.front() : v->second);
  }
  return s;
}

std::vector<std::pair<std::string, int64_t>> Knobs::parse(const std::string& assignments) {
  std::vector<std::pair<std::string, int64_t>> out;
  size_t i = 0;
  while (i < assignments.size()) {
    if (assignments[i] == ' ') { ++i; continue; }
    size_t end = assignments.find(' ', i);
    if (end == std::string::npos) end = assignments.size();
    const std::string item = assignments.substr(i, end - i);
    const size_t eq = item.find('=');
    char* rest = nullptr;
    const long long v = eq == std::string::npos ? 0 : std::strtoll(item.c_str() + eq + 1, &rest, 10);
    if (eq == 0 || eq == std::string::npos || rest == item.c_str() + eq + 1 || *rest != '\0')
      throw Error("knobs: '" + item + "' is not name=integer");
    out.emplace_back(item.substr(0, eq), v);
    i = end;
  }
  return out;
}

void Knobs::set_all(const std::string& assignments) {
  for (const auto& [name, value] : parse(assignments)) set(name, value);
}

}  // namespace sy::te
