#include "tir/arith.h"

#include <algorithm>

namespace sy::tir {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

bool expr_equal(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::Var: return false;  // identity only
    case ExprKind::IntImm: return a->int_value == b->int_value;
    case ExprKind::FloatImm: return a->float_value == b->float_value;
    case ExprKind::Call: if (a->name != b->name) return false; break;
    case ExprKind::Load: if (a->buffer != b->buffer) return false; break;
    case ExprKind::TensorRead: if (a->producer != b->producer) return false; break;
    case ExprKind::Reduce: return false;
    default: break;
  }
  if (a->operands.size() != b->operands.size()) return false;
  for (size_t i = 0; i < a->operands.size(); ++i)
    if (!expr_equal(a->operands[i], b->operands[i])) return false;
  return true;
}

namespace {

void add_term(LinearForm& f, const Expr& t, int64_t c) {
  if (c == 0) return;
  for (auto& [e, k] : f.terms)
    if (expr_equal(e, t)) {
      k += c;
      return;
    }
  f.terms.emplace_back(t, c);
}

void accumulate(LinearForm& f, const LinearForm& g, int64_t scale) {
  for (const auto& [t, c] : g.terms) add_term(f, t, c * scale);
  f.constant += g.constant * scale;
}

LinearForm constant_form(DType t, int64_t v) {
  LinearForm f;
  f.dtype = t;
  f.constant = v;
  return f;
}

void prune(LinearForm& f) {
  f.terms.erase(std::remove_if(f.terms.begin(), f.terms.end(), [](auto& p) { return p.second == 0; }),
                f.terms.end());
}

// k*c*(x / c) + k*(x % c) == k*x for floor division by c > 0: folds the index of a fused or
// flattened axis back into the plain one (p / W * W + p % W -> p).
void fold_div_mod(LinearForm& f) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < f.terms.size() && !changed; ++i) {
      const auto& [d, kd] = f.terms[i];
      int64_t c = 0;
      if (d->kind != ExprKind::Div || kd == 0 || !is_int_const(d->operands[1], &c) || c <= 0) continue;
      for (size_t j = 0; j < f.terms.size(); ++j) {
        const auto& [m, km] = f.terms[j];
        if (m->kind != ExprKind::Mod || km == 0 || kd != km * c || !expr_equal(m->operands[1], d->operands[1]) ||
            !expr_equal(m->operands[0], d->operands[0]))
          continue;
        const Expr x = d->operands[0];
        const int64_t k = km;  // the references die with the terms below
        f.terms[i].second = 0;
        f.terms[j].second = 0;
        accumulate(f, linear_form(x), k);
        changed = true;
        break;
      }
    }
    prune(f);
  }
}

bool is_constant(const LinearForm& f) {
  for (const auto& p : f.terms)
    if (p.second != 0) return false;
  return true;
}

}  // namespace

LinearForm linear_form(const Expr& e) {
  LinearForm f;
  f.dtype = e->dtype;
  switch (e->kind) {
    case ExprKind::IntImm: f.constant = e->int_value; return f;
    case ExprKind::Add:
    case ExprKind::Sub: {
      LinearForm a = linear_form(e->operands[0]), b = linear_form(e->operands[1]);
      accumulate(f, a, 1);
      accumulate(f, b, e->kind == ExprKind::Add ? 1 : -1);
      prune(f);
      fold_div_mod(f);
      return f;
    }
    case ExprKind::Mul: {
      LinearForm a = linear_form(e->operands[0]), b = linear_form(e->operands[1]);
      if (is_constant(b)) { accumulate(f, a, b.constant); prune(f); return f; }
      if (is_constant(a)) { accumulate(f, b, a.constant); prune(f); return f; }
      break;
    }
    default: break;
  }
  add_term(f, e, 1);
  return f;
}

Expr from_linear_form(const LinearForm& f) {
  Expr acc;
  for (const auto& [t, c] : f.terms) {
    if (c == 0) continue;
    const int64_t ac = c < 0 ? -c : c;
    Expr term = ac == 1 ? t : t * int_imm(ac, f.dtype);
    if (!acc)
      acc = c < 0 ? t * int_imm(c, f.dtype) : term;
    else
      acc = c < 0 ? acc - term : acc + term;
  }
  if (!acc) return int_imm(f.constant, f.dtype);
  if (f.constant > 0) acc = acc + int_imm(f.constant, f.dtype);
  if (f.constant < 0) acc = acc - int_imm(-f.constant, f.dtype);
  return acc;
}

namespace {

// Interval with linear-form ends.
struct LInterval {
  LinearForm lo, hi;
};

std::optional<LInterval> linterval(const Expr& e, const RangeMap& ranges);

LInterval point(const Expr& e) {
  LinearForm f = linear_form(e);
  return {f, f};
}

std::optional<int64_t> const_of_form(const LinearForm& f) {
  if (!is_constant(f)) return std::nullopt;
  return f.constant;
}

bool uses_ranged(const Expr& e, const RangeMap& ranges) {
  if (e->kind == ExprKind::Var) return ranges.count(e.get()) > 0;
  for (const auto& o : e->operands)
    if (uses_ranged(o, ranges)) return true;
  return false;
}

// min or max of two linear forms: exact when their difference is constant.
LinearForm pick(const LinearForm& a, const LinearForm& b, bool want_max) {
  LinearForm d = a;
  accumulate(d, b, -1);
  prune(d);
  if (is_constant(d)) return (d.constant >= 0) == want_max ? a : b;
  Expr ea = from_linear_form(a), eb = from_linear_form(b);
  return linear_form(want_max ? max(ea, eb) : min(ea, eb));
}

std::optional<LInterval> term_interval(const Expr& t, const RangeMap& ranges) {
  if (t->kind == ExprKind::Var) {
    auto it = ranges.find(t.get());
    if (it == ranges.end()) return point(t);
    return LInterval{linear_form(it->second.min), linear_form(it->second.max)};
  }
  if (!uses_ranged(t, ranges)) return point(t);
  switch (t->kind) {
    case ExprKind::Div:
    case ExprKind::Mod: {
      int64_t c = 0;
      if (!is_int_const(t->operands[1], &c) || c <= 0) return std::nullopt;
      auto a = linterval(t->operands[0], ranges);
      if (!a) return std::nullopt;
      auto lo = const_of_form(a->lo), hi = const_of_form(a->hi);
      if (t->kind == ExprKind::Mod) {
        if (lo && hi && floor_div(*lo, c) == floor_div(*hi, c))
          return LInterval{constant_form(t->dtype, floor_mod(*lo, c)), constant_form(t->dtype, floor_mod(*hi, c))};
        return LInterval{constant_form(t->dtype, 0), constant_form(t->dtype, c - 1)};
      }
      LInterval r;
      r.lo = lo ? constant_form(t->dtype, floor_div(*lo, c)) : linear_form(from_linear_form(a->lo) / int_imm(c, t->dtype));
      r.hi = hi ? constant_form(t->dtype, floor_div(*hi, c)) : linear_form(from_linear_form(a->hi) / int_imm(c, t->dtype));
      return r;
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      auto a = linterval(t->operands[0], ranges), b = linterval(t->operands[1], ranges);
      if (!a || !b) return std::nullopt;
      const bool mx = t->kind == ExprKind::Max;
      return LInterval{pick(a->lo, b->lo, mx), pick(a->hi, b->hi, mx)};
    }
    case ExprKind::Select: {
      auto a = linterval(t->operands[1], ranges), b = linterval(t->operands[2], ranges);
      if (!a || !b) return std::nullopt;
      return LInterval{pick(a->lo, b->lo, false), pick(a->hi, b->hi, true)};
    }
    case ExprKind::Mul: {  // product of two ranged terms: only constant ends
      auto a = linterval(t->operands[0], ranges), b = linterval(t->operands[1], ranges);
      if (!a || !b) return std::nullopt;
      auto al = const_of_form(a->lo), ah = const_of_form(a->hi), bl = const_of_form(b->lo), bh = const_of_form(b->hi);
      if (!al || !ah || !bl || !bh) return std::nullopt;
      int64_t v[4] = {*al * *bl, *al * *bh, *ah * *bl, *ah * *bh};
      return LInterval{constant_form(t->dtype, *std::min_element(v, v + 4)),
                       constant_form(t->dtype, *std::max_element(v, v + 4))};
    }
    case ExprKind::Cast: {
      if (!is_integer(t->operands[0]->dtype)) return std::nullopt;
      auto a = linterval(t->operands[0], ranges);
      if (!a) return std::nullopt;
      auto lo = const_of_form(a->lo), hi = const_of_form(a->hi);
      if (!lo || !hi) return std::nullopt;
      return LInterval{constant_form(t->dtype, *lo), constant_form(t->dtype, *hi)};
    }
    default: return std::nullopt;
  }
}

std::optional<LInterval> linterval(const Expr& e, const RangeMap& ranges) {
  if (!is_integer(e->dtype)) return std::nullopt;
  LinearForm f = linear_form(e);
  LInterval r{constant_form(e->dtype, f.constant), constant_form(e->dtype, f.constant)};
  for (const auto& [t, c] : f.terms) {
    auto ti = term_interval(t, ranges);
    if (!ti) return std::nullopt;
    accumulate(r.lo, c >= 0 ? ti->lo : ti->hi, c);
    accumulate(r.hi, c >= 0 ? ti->hi : ti->lo, c);
  }
  prune(r.lo);
  prune(r.hi);
  return r;
}

}  // namespace

std::optional<Interval> interval_of(const Expr& e, const RangeMap& ranges) {
  auto r = linterval(e, ranges);
  if (!r) return std::nullopt;
  return Interval{from_linear_form(r->lo), from_linear_form(r->hi)};
}

std::optional<std::pair<int64_t, int64_t>> const_bounds(const Expr& e, const RangeMap& ranges) {
  auto r = linterval(e, ranges);
  if (!r) return std::nullopt;
  auto lo = const_of_form(r->lo), hi = const_of_form(r->hi);
  if (!lo || !hi) return std::nullopt;
  return std::make_pair(*lo, *hi);
}

bool can_prove(const Expr& cond, const RangeMap& ranges) {
  switch (cond->kind) {
    case ExprKind::IntImm: return cond->int_value != 0;
    case ExprKind::And: return can_prove(cond->operands[0], ranges) && can_prove(cond->operands[1], ranges);
    case ExprKind::Or: return can_prove(cond->operands[0], ranges) || can_prove(cond->operands[1], ranges);
    default: break;
  }
  if (!is_comparison(cond->kind)) return false;
  const Expr& a = cond->operands[0];
  const Expr& b = cond->operands[1];
  if (!is_integer(a->dtype)) return false;
  auto d = const_bounds(a - b, ranges);
  if (!d) return false;
  switch (cond->kind) {
    case ExprKind::LT: return d->second < 0;
    case ExprKind::LE: return d->second <= 0;
    case ExprKind::GT: return d->first > 0;
    case ExprKind::GE: return d->first >= 0;
    case ExprKind::EQ: return d->first == 0 && d->second == 0;
    case ExprKind::NE: return d->first > 0 || d->second < 0;
    default: return false;
  }
}

}  // namespace sy::tir
