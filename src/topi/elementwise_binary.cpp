// Computes of the broadcasting binary ops (arithmetic, power, mod, prelu, comparisons, logic) and
// where, with the reference kernels' semantics (backends/reference/kernels_binary.cpp): integer
// division truncates, mod follows Python (or C with fmod=1), maximum/minimum propagate NaN,
// integer arithmetic wraps.
#include <cmath>
#include <limits>

#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"
#include "topi/elementwise.h"
#include "topi/topi.h"
#include "topi/util.h"

namespace sy::topi {

using ops::OpCode;
using tir::cast;
using tir::int_imm;
using tir::select;

namespace {

// ONNX integer division: truncation toward zero (IR division on integers floors); b == -1 is
// negation (no INT_MIN / -1 trap).
Expr trunc_div(const Expr& a, const Expr& b) {
  const DType t = a->dtype;
  if (t == DType::u8) return a / b;
  const Expr zero = cst(t, 0);
  Expr q = a / b, r = a % b;
  Expr fix = tir::logical_and(tir::ne(r, zero), tir::ne(a < zero, b < zero));
  return select(tir::eq(b, cst(t, -1)), zero - a, select(fix, q + cst(t, 1), q));
}

Expr python_mod(const Expr& a, const Expr& b) {
  const DType t = a->dtype;
  const Expr zero = cst(t, 0);
  if (is_float(t)) {
    Expr r = a % b;  // C fmod on floats
    return select(tir::logical_and(tir::ne(r, zero), tir::ne(r < zero, b < zero)), r + b, r);
  }
  if (t == DType::u8) return a % b;
  return select(tir::eq(b, cst(t, -1)), zero, a % b);  // IR mod on integers floors: Python's
}

Expr c_fmod(const Expr& a, const Expr& b) {
  const DType t = a->dtype;
  if (is_float(t) || t == DType::u8) return a % b;
  const Expr zero = cst(t, 0);
  Expr r = a % b;  // sign of b; C's remainder has the sign of a
  Expr fix = tir::logical_and(tir::ne(r, zero), tir::ne(a < zero, b < zero));
  return select(tir::eq(b, cst(t, -1)), zero, select(fix, r - b, r));
}

// cvt_from_double of the reference: a double to T (NaN -> 0, saturating through int64).
Expr from_double(DType t, const Expr& d) {
  if (is_float(t)) return cast(t, d);
  return cast_value(t, d);
}

// Exact wrapping integer power by squaring over the exponent's low 6 bits; exponents >= 64 go
// through pow() in double (as the reference only where the result fits in 53 bits).
Expr int_pow(const Expr& a, const Expr& e) {
  const DType t = a->dtype;
  const Expr ei = cast(DType::i64, e);
  const Expr one = cst(t, 1);
  Expr result = one, base = a;
  for (int k = 0; k < 6; ++k) {
    Expr bit = tir::ne((ei / int_imm(int64_t{1} << k)) % int_imm(2), int_imm(0));
    result = result * select(bit, base, one);
    if (k < 5) base = base * base;
  }
  Expr big = from_double(t, tir::call("pow", DType::f64, {cast(DType::f64, a), cast(DType::f64, e)}));
  // Negative exponents: 1/a^-e truncated toward zero.
  Expr neg = select(tir::eq(a, one), one, cst(t, 0));
  if (t != DType::u8) {
    Expr odd = tir::ne(ei % int_imm(2), int_imm(0));
    neg = select(tir::eq(a, cst(t, -1)), select(odd, cst(t, -1), one), neg);
  }
  return select(ei < int_imm(0), neg, select(ei < int_imm(64), result, big));
}

Expr power(const Expr& a, const Expr& b) {
  const DType ta = a->dtype, tb = b->dtype;
  if (is_integer(ta) && is_integer(tb)) return int_pow(a, b);
  if (is_float(ta) && ta == tb) return tir::call("pow", ta, {a, b});
  return from_double(ta, tir::call("pow", DType::f64, {cast(DType::f64, a), cast(DType::f64, b)}));
}

}  // namespace

Expr binary_value(const ir::CallNode& call, const Expr& a, const Expr& b) {
  const DType t = a->dtype;
  const bool fl = is_float(t);
  switch (call.op) {
    case OpCode::Add: return a + b;
    case OpCode::Sub: return a - b;
    case OpCode::Mul: return a * b;
    case OpCode::Div: return fl ? a / b : trunc_div(a, b);
    case OpCode::Pow: return power(a, b);
    case OpCode::Mod:
      if (t == DType::boolean) throw Error("mod: not defined for bool");
      return call.attrs_as<ops::ModAttrs>().fmod ? c_fmod(a, b) : python_mod(a, b);
    case OpCode::Maximum:
    case OpCode::Minimum: {
      if (!fl) return call.op == OpCode::Maximum ? select(a < b, b, a) : select(b < a, b, a);
      // NaN propagates. A helper of the generated code's preamble, chosen by bit masks: GCC 12
      // -O3 miscompiled the nested isnan()||isnan() ? NAN : select form in an omp simd loop.
      return tir::call(std::string(call.op == OpCode::Maximum ? "sy_nanmax_" : "sy_nanmin_") +
                           (t == DType::f32 ? "float" : "double"),
                       t, {a, b});
    }
    case OpCode::PRelu: return select(a < cst(t, 0), b * a, a);
    case OpCode::Equal: return tir::eq(a, b);
    case OpCode::Less: return a < b;
    case OpCode::LessEqual: return a <= b;
    case OpCode::Greater: return a > b;
    case OpCode::GreaterEqual: return a >= b;
    case OpCode::LogicalAnd:
    case OpCode::LogicalOr:
    case OpCode::LogicalXor: {
      Expr x = t == DType::boolean ? a : tir::ne(a, cst(t, 0));
      Expr y = t == DType::boolean ? b : tir::ne(b, cst(t, 0));
      if (call.op == OpCode::LogicalAnd) return tir::logical_and(x, y);
      if (call.op == OpCode::LogicalOr) return tir::logical_or(x, y);
      return tir::ne(x, y);
    }
    default: break;
  }
  SY_CHECK(false) << "binary_value called for " << ops::op_name(call.op);
  return a;
}

void register_binary(Registry& r) {
  const OpCode ops_list[] = {OpCode::Add,     OpCode::Sub,       OpCode::Mul,        OpCode::Div,
                             OpCode::Pow,     OpCode::Maximum,   OpCode::Minimum,    OpCode::Mod,
                             OpCode::PRelu,   OpCode::Equal,     OpCode::Less,       OpCode::LessEqual,
                             OpCode::Greater, OpCode::GreaterEqual, OpCode::LogicalAnd, OpCode::LogicalOr,
                             OpCode::LogicalXor};
  for (OpCode op : ops_list) {
    OpImpl impl;
    impl.compute = [](const ir::CallNode& call, const std::vector<te::Tensor>& in) -> std::vector<te::Tensor> {
      const te::Tensor a = in.at(0), b = in.at(1);
      (void)binary_value(call, tir::var("a", a.dtype()), tir::var("b", b.dtype()));  // attribute/dtype errors now
      return {compute_like(call, ops::op_name(call.op), [&](const std::vector<Expr>& i) {
        return binary_value(call, broadcast_read(a, i), broadcast_read(b, i));
      })};
    };
    r.add(op, std::move(impl));
  }
  OpImpl where;
  where.compute = [](const ir::CallNode& call, const std::vector<te::Tensor>& in) -> std::vector<te::Tensor> {
    const te::Tensor c = in.at(0), x = in.at(1), y = in.at(2);
    return {compute_like(call, "where", [&](const std::vector<Expr>& i) {
      return select(broadcast_read(c, i), broadcast_read(x, i), broadcast_read(y, i));
    })};
  };
  r.add(OpCode::Where, std::move(where));
}

}  // namespace sy::topi
