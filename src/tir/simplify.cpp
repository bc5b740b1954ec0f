#include "tir/simplify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "tir/functor.h"

namespace sy::tir {

namespace {

// Wraps an integer to the range of dtype t (two's complement), as C would.
int64_t wrap_int(int64_t v, DType t) {
  int64_t r = v;
  dispatch_dtype(t, [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) r = static_cast<int64_t>(static_cast<T>(v));
  });
  if (t == DType::boolean) r = v != 0;
  return r;
}

Expr fold_const(const Expr& e) {
  const auto& o = e->operands;
  if (o.empty()) return e;
  for (const auto& x : o)
    if (!x->is_const()) return e;
  if (e->kind == ExprKind::Cast) {
    const Expr& a = o[0];
    double v = a->kind == ExprKind::IntImm ? double(a->int_value) : a->float_value;
    if (is_float(e->dtype)) return float_imm(is_float(a->dtype) ? a->float_value : v, e->dtype);
    if (e->dtype == DType::boolean) return int_imm(v != 0, DType::boolean);
    if (a->kind == ExprKind::IntImm) return int_imm(wrap_int(a->int_value, e->dtype), e->dtype);
    return e;  // float -> int: leave to C semantics
  }
  if (e->kind == ExprKind::Not) return int_imm(o[0]->int_value == 0, DType::boolean);
  if (e->kind == ExprKind::Select) return o[0]->int_value ? o[1] : o[2];
  if (o.size() != 2) return e;
  const bool fl = is_float(o[0]->dtype);
  if (fl) {
    double a = o[0]->float_value, b = o[1]->float_value;
    switch (e->kind) {
      case ExprKind::Add: return float_imm(a + b, e->dtype);
      case ExprKind::Sub: return float_imm(a - b, e->dtype);
      case ExprKind::Mul: return float_imm(a * b, e->dtype);
      case ExprKind::Div: return float_imm(a / b, e->dtype);
      // As the C generator emits them (a < b ? a : b): the second operand when unordered.
      case ExprKind::Min: return float_imm(a < b ? a : b, e->dtype);
      case ExprKind::Max: return float_imm(a > b ? a : b, e->dtype);
      case ExprKind::EQ: return int_imm(a == b, DType::boolean);
      case ExprKind::NE: return int_imm(a != b, DType::boolean);
      case ExprKind::LT: return int_imm(a < b, DType::boolean);
      case ExprKind::LE: return int_imm(a <= b, DType::boolean);
      case ExprKind::GT: return int_imm(a > b, DType::boolean);
      case ExprKind::GE: return int_imm(a >= b, DType::boolean);
      default: return e;
    }
  }
  int64_t a = o[0]->int_value, b = o[1]->int_value;
  const DType t = e->dtype;
  switch (e->kind) {
    case ExprKind::Add: return int_imm(wrap_int(a + b, t), t);
    case ExprKind::Sub: return int_imm(wrap_int(a - b, t), t);
    case ExprKind::Mul: return int_imm(wrap_int(a * b, t), t);
    case ExprKind::Div: return b == 0 ? e : int_imm(floor_div(a, b), t);
    case ExprKind::Mod: return b == 0 ? e : int_imm(floor_mod(a, b), t);
    case ExprKind::Min: return int_imm(std::min(a, b), t);
    case ExprKind::Max: return int_imm(std::max(a, b), t);
    case ExprKind::EQ: return int_imm(a == b, t);
    case ExprKind::NE: return int_imm(a != b, t);
    case ExprKind::LT: return int_imm(a < b, t);
    case ExprKind::LE: return int_imm(a <= b, t);
    case ExprKind::GT: return int_imm(a > b, t);
    case ExprKind::GE: return int_imm(a >= b, t);
    case ExprKind::And: return int_imm(a && b, t);
    case ExprKind::Or: return int_imm(a || b, t);
    default: return e;
  }
}

bool is_const_value(const Expr& e, double v) {
  if (e->kind == ExprKind::IntImm) return double(e->int_value) == v;
  if (e->kind == ExprKind::FloatImm) return e->float_value == v;
  return false;
}

bool is_index_like(DType t) { return t == DType::i64 || t == DType::i32; }

// The values of an integer type (int64 short of its ends: doubles cannot hold them).
std::pair<double, double> int_range(DType t) {
  switch (t) {
    case DType::u8: return {0.0, 255.0};
    case DType::i8: return {-128.0, 127.0};
    case DType::i16: return {-32768.0, 32767.0};
    case DType::i32: return {-2147483648.0, 2147483647.0};
    default: return {-9.2e18, 9.2e18};
  }
}

// Bounds of a float expression's values other than NaN, from the constants of the min and max
// around it (Clip lowers to min(hi, max(lo, v)), which lets NaN through) and from small integer
// sources; infinite where unknown.
std::pair<double, double> float_bounds(const Expr& e) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  switch (e->kind) {
    case ExprKind::FloatImm: return {e->float_value, e->float_value};
    case ExprKind::Min:
    case ExprKind::Max: {
      const auto a = float_bounds(e->operands[0]), b = float_bounds(e->operands[1]);
      if (e->kind == ExprKind::Min) return {std::min(a.first, b.first), std::min(a.second, b.second)};
      return {std::max(a.first, b.first), std::max(a.second, b.second)};
    }
    case ExprKind::Add: {
      // Widened by float32's relative rounding: the sum is rounded in the kernel's type.
      const auto a = float_bounds(e->operands[0]), b = float_bounds(e->operands[1]);
      const double lo = a.first + b.first, hi = a.second + b.second;
      if (std::isnan(lo) || std::isnan(hi)) return {-inf, inf};
      return {lo - std::fabs(lo) * 0x1p-23, hi + std::fabs(hi) * 0x1p-23};
    }
    case ExprKind::Cast: {
      // Only the small integer types: a converted int32 is left unbounded, as before.
      const DType from = e->operands[0]->dtype;
      if (from == DType::u8 || from == DType::i8 || from == DType::i16) return int_range(from);
      if (from == DType::boolean) return {0.0, 1.0};
      return {-inf, inf};
    }
    default: return {-inf, inf};
  }
}

// The reference's float -> integer conversion, as topi writes it (NaN -> 0, saturated to int64):
// select(isnan(v), 0, select(v < -2^63, INT64_MIN, select(v >= 2^63, INT64_MAX, (int64)v))).
// Where v's values lie within int32 (a quantizer's clip to [0, 255]), it converts through int32,
// and NaN becomes 0 as max(v, 0) + min(v, 0), or max(v, 0) for a v that cannot be negative (NaN
// fails the comparisons; any other v is unchanged): no select on data, which made the C
// generator build the kernel without loop if-conversion, and no int64 conversion, which AVX2 has
// no vector instruction for. A quantized MobileNetV2's convs with their quantize-dequantize
// epilogue ran at 7-48 GFLOP/s.
Expr narrow_float_to_int(const Expr& e) {
  const auto& o = e->operands;
  if (o[0]->kind != ExprKind::Call || o[0]->name != "isnan" || !is_const_value(o[1], 0)) return e;
  const Expr v = o[0]->operands[0];
  const Expr& lo = o[2];
  if (lo->kind != ExprKind::Select || lo->operands[0]->kind != ExprKind::LT || !expr_equal(lo->operands[0]->operands[0], v))
    return e;
  const Expr& hi = lo->operands[2];
  if (hi->kind != ExprKind::Select || hi->operands[0]->kind != ExprKind::GE || !expr_equal(hi->operands[0]->operands[0], v))
    return e;
  const Expr& conv = hi->operands[2];
  if (conv->kind != ExprKind::Cast || conv->dtype != DType::i64 || !expr_equal(conv->operands[0], v)) return e;
  // Both saturating arms out of v's reach, v inside int32.
  const auto [lo_v, hi_v] = float_bounds(v);
  const Expr &below = lo->operands[0]->operands[1], &above = hi->operands[0]->operands[1];
  if (below->kind != ExprKind::FloatImm || above->kind != ExprKind::FloatImm || below->float_value > lo_v ||
      above->float_value <= hi_v || lo_v < -2147483648.0 || hi_v >= 2147483648.0)
    return e;
  // Where v cannot be negative, max(v, 0) alone makes NaN 0 (two vector operations fewer per
  // element in a quantizer's epilogue).
  const Expr zero = const_of(v->dtype, 0);
  if (lo_v >= 0) return cast(DType::i64, cast(DType::i32, max(v, zero)));
  return cast(DType::i64, cast(DType::i32, max(v, zero) + min(v, zero)));
}

// Whether float e cannot be NaN: a constant, or min/max whose second operand cannot be (every
// code generator's min/max gives the second operand when the comparison is unordered), or a sum
// of such with finite bounds (inf + -inf is NaN).
bool nan_free(const Expr& e) {
  switch (e->kind) {
    case ExprKind::FloatImm: return !std::isnan(e->float_value);
    case ExprKind::Min:
    case ExprKind::Max: return nan_free(e->operands[1]);
    case ExprKind::Add: {
      const auto a = float_bounds(e->operands[0]), b = float_bounds(e->operands[1]);
      return nan_free(e->operands[0]) && nan_free(e->operands[1]) && std::isfinite(a.first) && std::isfinite(a.second) &&
             std::isfinite(b.first) && std::isfinite(b.second);
    }
    default: return false;
  }
}

// Bounds of an integer expression's values where the narrowing rules can vouch for them: a float
// that cannot be NaN converted within its bounds (as narrow_float_to_int writes it), an integer
// widened from a narrower type, a constant. nullopt otherwise.
std::optional<std::pair<double, double>> int_value_bounds(const Expr& e) {
  if (e->kind == ExprKind::IntImm) return std::pair<double, double>(double(e->int_value), double(e->int_value));
  if (e->kind != ExprKind::Cast || !is_integer(e->dtype)) return std::nullopt;
  const Expr& a = e->operands[0];
  if (is_integer(a->dtype)) {
    auto b = int_value_bounds(a);
    if (!b) b = int_range(a->dtype);
    const auto r = int_range(e->dtype);
    if (b->first >= r.first && b->second <= r.second) return b;
    return std::nullopt;
  }
  if (!is_float(a->dtype) || !nan_free(a)) return std::nullopt;
  const auto [lo, hi] = float_bounds(a);
  const double t_lo = std::trunc(lo), t_hi = std::trunc(hi);
  const auto r = int_range(e->dtype);
  if (!(t_lo >= r.first && t_hi <= r.second)) return std::nullopt;
  return std::pair<double, double>(t_lo, t_hi);
}

Expr rewrite(const Expr& in, const RangeMap& ranges) {
  Expr e = fold_const(in);
  if (e != in || e->operands.empty()) return e;
  const auto& o = e->operands;
  switch (e->kind) {
    case ExprKind::Add:
    case ExprKind::Sub:
    case ExprKind::Mul:
      if (is_index_like(e->dtype)) {
        Expr r = from_linear_form(linear_form(e));
        return expr_equal(r, e) ? e : r;
      }
      if (e->kind == ExprKind::Add && is_const_value(o[1], 0)) return o[0];
      if (e->kind == ExprKind::Add && is_const_value(o[0], 0)) return o[1];
      if (e->kind == ExprKind::Sub && is_const_value(o[1], 0)) return o[0];
      if (e->kind == ExprKind::Mul && is_const_value(o[1], 1)) return o[0];
      if (e->kind == ExprKind::Mul && is_const_value(o[0], 1)) return o[1];
      return e;
    case ExprKind::Div:
    case ExprKind::Mod: {
      if (is_float(e->dtype)) return is_const_value(o[1], 1) && e->kind == ExprKind::Div ? o[0] : e;
      int64_t c = 0;
      if (!is_int_const(o[1], &c) || c <= 0) return e;
      if (c == 1) return e->kind == ExprKind::Div ? o[0] : int_imm(0, e->dtype);
      if (auto b = const_bounds(o[0], ranges); b && floor_div(b->first, c) == floor_div(b->second, c)) {
        const int64_t q = floor_div(b->first, c);
        if (e->kind == ExprKind::Div) return int_imm(q, e->dtype);
        return simplify(o[0] - int_imm(q * c, e->dtype), ranges);
      }
      LinearForm f = linear_form(o[0]);
      // (g*m + s) / c == m / (c/g) and (g*m + s) % c == g*(m % (c/g)) + s when g divides c and the
      // coefficients of the larger terms, and the smaller terms s lie in [0, g) over the loop
      // ranges (x = g*m + s >= 0, so m >= 0 and C's division is the floor). A reshape of a
      // contiguous slice divides i*56 + l by 3136 (a plane) and by 451584 (an image) for every
      // lane l of the vector loop: the lanes then share one index, and the copy is a vector copy
      // (a 3-D conv's depth taps in R(2+1)D-18 copied at 6.5 GB/s).
      if (f.terms.size() > 1) {
        auto whole = const_bounds(o[0], ranges);
        std::vector<std::pair<Expr, int64_t>> ts = f.terms;
        std::stable_sort(ts.begin(), ts.end(), [](const auto& a, const auto& b) {
          return (a.second < 0 ? -a.second : a.second) > (b.second < 0 ? -b.second : b.second);
        });
        int64_t g = c;
        for (size_t s = 1; whole && whole->first >= 0 && s < ts.size(); ++s) {
          g = std::gcd(g, ts[s - 1].second < 0 ? -ts[s - 1].second : ts[s - 1].second);
          if (g <= 1) break;
          LinearForm small;
          small.dtype = f.dtype;
          small.terms.assign(ts.begin() + static_cast<std::ptrdiff_t>(s), ts.end());
          small.constant = f.constant;
          const Expr se = from_linear_form(small);
          auto sb = const_bounds(se, ranges);
          if (!sb || sb->first < 0 || sb->second >= g) continue;
          LinearForm large;
          large.dtype = f.dtype;
          for (size_t t = 0; t < s; ++t) large.terms.emplace_back(ts[t].first, ts[t].second / g);
          const Expr m = from_linear_form(large), h = int_imm(c / g, e->dtype);
          if (e->kind == ExprKind::Div) return simplify(binary(ExprKind::Div, m, h), ranges);
          return simplify(int_imm(g, e->dtype) * binary(ExprKind::Mod, m, h) + se, ranges);
        }
      }
      // (g*m + b) / c == (g*m) / c and (g*m + b) % c == (g*m) % c + b when g, the gcd of the
      // coefficients, divides c and 0 <= b < g: g*m lies on a multiple of g, and a multiple of g
      // below a multiple of c is at most c - g below it. The offsets of an unrolled tile inside a
      // block of c (8 output channels of a 16-channel group read the same input channel): the
      // copies then share one index, which the C compiler loads once.
      if (!f.terms.empty() && f.constant > 0) {
        int64_t g = 0;
        for (const auto& [t, k] : f.terms) g = std::gcd(g, k < 0 ? -k : k);
        if (g > 1 && c % g == 0 && f.constant < g) {
          LinearForm base = f;
          base.constant = 0;
          Expr r = binary(e->kind, from_linear_form(base), o[1]);
          if (e->kind == ExprKind::Mod) r = r + int_imm(f.constant, e->dtype);
          return simplify(r, ranges);
        }
      }
      // (c*a + b) / c == a + b / c when the coefficients of the a-part are multiples of c.
      LinearForm mult, rest;
      mult.dtype = rest.dtype = f.dtype;
      for (const auto& [t, k] : f.terms) (k % c == 0 ? mult : rest).terms.emplace_back(t, k);
      rest.constant = f.constant;
      if (mult.terms.empty()) return e;
      for (auto& [t, k] : mult.terms) k /= c;
      Expr r = from_linear_form(rest);
      if (e->kind == ExprKind::Mod) return simplify(binary(ExprKind::Mod, r, o[1]), ranges);
      return simplify(from_linear_form(mult) + binary(ExprKind::Div, r, o[1]), ranges);
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      if (expr_equal(o[0], o[1])) return o[0];
      if (!is_integer(e->dtype)) return e;
      if (auto d = const_bounds(o[0] - o[1], ranges)) {
        const bool mx = e->kind == ExprKind::Max;
        if (d->second <= 0) return mx ? o[1] : o[0];
        if (d->first >= 0) return mx ? o[0] : o[1];
      }
      return e;
    }
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
      if (!is_integer(o[0]->dtype)) return e;
      if (can_prove(e, ranges)) return int_imm(1, DType::boolean);
      if (int64_t c = 0; is_int_const(o[1], &c) && is_index_like(o[0]->dtype)) {
        // a + c1 < c2  ->  a < c2 - c1
        LinearForm f = linear_form(o[0]);
        if (f.constant != 0 && !f.terms.empty()) {
          const int64_t k = f.constant;
          f.constant = 0;
          return rewrite(binary(e->kind, from_linear_form(f), int_imm(c - k, o[1]->dtype)), ranges);
        }
      }
      {
        ExprKind neg = e->kind == ExprKind::EQ ? ExprKind::NE : e->kind == ExprKind::NE ? ExprKind::EQ
                     : e->kind == ExprKind::LT ? ExprKind::GE : e->kind == ExprKind::LE ? ExprKind::GT
                     : e->kind == ExprKind::GT ? ExprKind::LE : ExprKind::LT;
        if (can_prove(binary(neg, o[0], o[1]), ranges)) return int_imm(0, DType::boolean);
      }
      return e;
    case ExprKind::And:
      if (is_const_value(o[0], 1)) return o[1];
      if (is_const_value(o[1], 1)) return o[0];
      if (is_const_value(o[0], 0) || is_const_value(o[1], 0)) return int_imm(0, DType::boolean);
      return e;
    case ExprKind::Or:
      if (is_const_value(o[0], 0)) return o[1];
      if (is_const_value(o[1], 0)) return o[0];
      if (is_const_value(o[0], 1) || is_const_value(o[1], 1)) return int_imm(1, DType::boolean);
      return e;
    case ExprKind::Select:
      if (is_const_value(o[0], 1)) return o[1];
      if (is_const_value(o[0], 0)) return o[2];
      if (expr_equal(o[1], o[2])) return o[1];
      return narrow_float_to_int(e);
    case ExprKind::Cast:
      // (T)(int64)x == (T)x for an int32 x and an integer T of at most 32 bits (the low bits).
      if (o[0]->kind == ExprKind::Cast && o[0]->dtype == DType::i64 && o[0]->operands[0]->dtype == DType::i32 &&
          is_integer(e->dtype) && dtype_size(e->dtype) <= 4)
        return cast(e->dtype, o[0]->operands[0]);
      // (T)(N)x == (T)x for an integer x within the narrow integer type N: a quantizer's
      // (float)(uint8)(int32)v. The byte in between made GCC vectorize the whole loop with
      // 16-byte vectors (a 16-iteration loop cannot fill 64 byte lanes), every float op in xmm:
      // a quantized MobileNetV2's 1x1 convs ran at 40-60% of their float32 speed.
      if (o[0]->kind == ExprKind::Cast && is_integer(o[0]->dtype) && is_integer(o[0]->operands[0]->dtype) &&
          e->dtype != DType::boolean) {
        const auto b = int_value_bounds(o[0]->operands[0]);
        const auto r = int_range(o[0]->dtype);
        if (b && b->first >= r.first && b->second <= r.second) return cast(e->dtype, o[0]->operands[0]);
      }
      return e;
    default: return e;
  }
}

class StmtSimplifier {
 public:
  Stmt run(const Stmt& s) {
    if (!s) return s;
    switch (s->kind) {
      case StmtKind::For: {
        Expr mn = E(s->min), ext = E(s->extent);
        int64_t lo = 0, n = 0;
        if (is_int_const(ext, &n) && n <= 0) return no_op();
        // One iteration: the body with the variable's value. A parallel loop's stays a loop: it may
        // be a piece of a partitioned loop whose threads share the pieces' iterations (a conv's
        // first group of rows, peeled off for the padding); alone, the code generators run it in
        // place.
        if (is_int_const(ext, &n) && n == 1) {
          Stmt body = run(substitute(s->body, {{s->var.get(), mn}}));
          if (s->for_kind != ForKind::Parallel || is_no_op(body)) return body;
          return for_loop(s->var, mn, ext, s->for_kind, body);
        }
        const bool ranged = is_int_const(mn, &lo) && is_int_const(ext, &n);
        if (ranged) ranges_[s->var.get()] = {int_imm(lo, s->var->dtype), int_imm(lo + n - 1, s->var->dtype)};
        Stmt body = run(s->body);
        if (ranged) ranges_.erase(s->var.get());
        if (is_no_op(body)) return no_op();
        if (mn == s->min && ext == s->extent && body == s->body) return s;
        return for_loop(s->var, mn, ext, s->for_kind, body);
      }
      case StmtKind::IfThenElse: {
        Expr c = E(s->cond);
        if (is_const_value(c, 1)) return run(s->body);
        if (is_const_value(c, 0)) return s->else_body ? run(s->else_body) : no_op();
        Stmt t = run(s->body), f = s->else_body ? run(s->else_body) : nullptr;
        if (f && is_no_op(f)) f = nullptr;
        if (is_no_op(t) && !f) return no_op();
        if (c == s->cond && t == s->body && f == s->else_body) return s;
        return if_then_else(c, t, f);
      }
      case StmtKind::LetStmt: {
        Expr v = E(s->value);
        if (v->is_const() || v->kind == ExprKind::Var) return run(substitute(s->body, {{s->var.get(), v}}));
        Stmt body = run(s->body);
        if (v == s->value && body == s->body) return s;
        return let_stmt(s->var, v, body);
      }
      default:
        return map_stmt(s, [this](const Stmt& c) { return run(c); }, [this](const Expr& e) { return E(e); });
    }
  }

 private:
  Expr E(const Expr& e) { return simplify(e, ranges_); }
  RangeMap ranges_;
};

}  // namespace

Expr simplify(const Expr& e, const RangeMap& ranges) {
  return mutate_expr(e, [&](const Expr& x) { return rewrite(x, ranges); });
}

Stmt simplify(const Stmt& s) { return StmtSimplifier().run(s); }

PrimFunc simplify(PrimFunc f) {
  f.body = simplify(f.body);
  return f;
}

}  // namespace sy::tir
