// Computes of the unary elementwise ops: math functions, activations, clip, cast and the
// predicates (isnan, isinf, logical_not). Values follow the reference kernels
// (backends/reference/kernels_unary.cpp) operation by operation, so f32 results match bit for bit
// where the C library agrees with itself.
#include <cmath>
#include <limits>
#include <numbers>

#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"
#include "topi/elementwise.h"
#include "topi/topi.h"
#include "topi/util.h"

namespace sy::topi {

using ops::OpCode;
using tir::cast;
using tir::select;

namespace {

// numpy's float -> int conversion as the reference does it: NaN -> 0, saturate to int64, then
// wrap to the narrower type.
Expr float_to_int(DType to, const Expr& v) {
  const DType from = v->dtype;
  const double two63 = 9223372036854775808.0;
  Expr i = select(v < cst(from, -two63), tir::int_imm(std::numeric_limits<int64_t>::min()),
                  select(v >= cst(from, two63), tir::int_imm(std::numeric_limits<int64_t>::max()),
                         cast(DType::i64, v)));
  i = select(is_nan(v), tir::int_imm(0), i);
  return cast(to, i);
}

// The value of double d converted to dtype t as the reference's convert<T, double> does.
Expr convert_const(DType t, double d) {
  if (is_float(t)) return cst(t, d);
  if (t == DType::boolean) return tir::int_imm(d != 0, DType::boolean);
  int64_t i = 0;
  if (std::isnan(d)) i = 0;
  else if (d < -9223372036854775808.0) i = std::numeric_limits<int64_t>::min();
  else if (d >= 9223372036854775808.0) i = std::numeric_limits<int64_t>::max();
  else i = static_cast<int64_t>(d);
  int64_t wrapped = i;
  dispatch_dtype(t, [&](auto x) {
    using T = decltype(x);
    wrapped = static_cast<int64_t>(static_cast<T>(i));
  });
  return tir::int_imm(wrapped, t);
}

// The activations below are written without a select on the value where the reference branches
// on its sign: a select whose condition reads data makes the C generator build the whole kernel
// without loop if-conversion (a GCC 12 miscompile, see c_generator.cpp), and a select whose arm
// calls exp is not vectorized either, so one such op left a fused kernel scalar: EfficientNet's
// SiLU (x * sigmoid(x)) ran at 8 ns per element, 70% of the model. tir::max(a, b) is
// (a > b ? a : b) and tir::min(a, b) is (a < b ? a : b) on floats, without a branch; the forms
// below give the reference's values (the same operations on each side of zero) and its NaNs; a
// zero result may be +0 where the reference's is -0 (elu and leaky_relu of -0).

// std::max(a, b) and std::min(a, b) exactly (the first argument wins ties and NaN comparisons):
// std::max(a, b) = (a < b ? b : a) = (b > a ? b : a).
Expr std_max(const Expr& a, const Expr& b) { return tir::max(b, a); }
Expr std_min(const Expr& a, const Expr& b) { return tir::min(b, a); }

// v > 0 ? v + log1p(exp(-v)) : log1p(exp(v)), as max(0, v) + log1p(exp(-|v|)) (0 + y is y).
Expr softplus(const Expr& v) {
  const Expr zero = cst(v->dtype, 0);
  return tir::max(zero, v) + math("log1p", tir::exp(zero - tir::abs(v)));
}

}  // namespace

Expr cast_value(DType to, const Expr& v) {
  if (v->dtype == to) return v;
  if (is_float(v->dtype) && is_integer(to)) return float_to_int(to, v);
  return cast(to, v);
}

Expr unary_value(const ir::CallNode& call, const Expr& v) {
  const DType t = v->dtype;
  const bool fl = is_float(t);
  auto c = [&](double x) { return cst(t, x); };
  const Expr zero = c(0), one = c(1), half = c(0.5);
  const OpCode op = call.op;
  switch (op) {
    case OpCode::Neg: return fl ? v * c(-1) : c(0) - v;  // x * -1 keeps -0.0 and NaN as unary minus
    case OpCode::Abs: return t == DType::u8 ? v : tir::abs(v);
    // max(0, v) is (0 > v ? 0 : v): NaN passes through, and, unlike a select whose arm repeats v,
    // GCC turns it into vmaxps even in scalar epilogues (branches there mispredict on real data).
    case OpCode::Relu: return fl ? tir::max(zero, v) : select(v < zero, zero, v);
    case OpCode::Sign: {
      Expr s = select(v > zero, one, select(v < zero, c(-1), zero));
      return fl ? select(is_nan(v), v, s) : s;
    }
    case OpCode::Identity: return v;
    case OpCode::LogicalNot: return tir::logical_not(t == DType::boolean ? v : tir::ne(v, zero));
    case OpCode::IsNaN: return is_nan(v);
    case OpCode::IsInf: {
      const auto& a = call.attrs_as<ops::IsInfAttrs>();
      if (!fl || (!a.detect_positive && !a.detect_negative)) return tir::int_imm(0, DType::boolean);
      const double inf = std::numeric_limits<double>::infinity();
      if (a.detect_positive && a.detect_negative) return tir::call("isinf", DType::boolean, {v});
      return tir::eq(v, tir::float_imm(a.detect_positive ? inf : -inf, t));
    }
    case OpCode::Clip: {
      const auto& a = call.attrs_as<ops::ClipAttrs>();
      // np.clip as the reference: compare in double, replace by the bound converted to T.
      Expr r = v;
      if (fl) {  // min(hi, max(lo, v)): NaN passes through, no branches (see Relu)
        if (!(std::isinf(a.min) && a.min < 0)) r = tir::max(convert_const(t, a.min), r);
        if (!(std::isinf(a.max) && a.max > 0)) r = tir::min(convert_const(t, a.max), r);
        return r;
      }
      auto as_double = [&](const Expr& x) { return fl ? x : cast(DType::f64, x); };
      auto bound = [&](double b) { return fl ? cst(t, b) : tir::float_imm(b, DType::f64); };
      if (!(std::isinf(a.min) && a.min < 0)) r = select(as_double(r) < bound(a.min), convert_const(t, a.min), r);
      if (!(std::isinf(a.max) && a.max > 0)) r = select(as_double(r) > bound(a.max), convert_const(t, a.max), r);
      return r;
    }
    case OpCode::Cast: return cast_value(call.attrs_as<ops::CastAttrs>().to, v);
    default: break;
  }
  if (!fl) throw Error("topi: " + ops::op_name(op) + " is defined on float tensors only, got " + std::string(dtype_name(t)));
  switch (op) {
    case OpCode::Exp: return math("exp", v);
    case OpCode::Log: return math("log", v);
    case OpCode::Sqrt: return math("sqrt", v);
    case OpCode::Reciprocal: return one / v;
    case OpCode::Sin: return math("sin", v);
    case OpCode::Cos: return math("cos", v);
    case OpCode::Tan: return math("tan", v);
    case OpCode::Asin: return math("asin", v);
    case OpCode::Acos: return math("acos", v);
    case OpCode::Atan: return math("atan", v);
    case OpCode::Sinh: return math("sinh", v);
    case OpCode::Cosh: return math("cosh", v);
    case OpCode::Asinh: return math("asinh", v);
    case OpCode::Acosh: return math("acosh", v);
    case OpCode::Atanh: return math("atanh", v);
    case OpCode::Tanh: return math("tanh", v);
    case OpCode::Erf: return math("erf", v);
    case OpCode::Floor: return math("floor", v);
    case OpCode::Ceil: return math("ceil", v);
    case OpCode::Round: return math("nearbyint", v);  // half to even in the default rounding mode
    case OpCode::Sigmoid:
    {
      // 1 / (1 + exp(-v)). The reference splits by sign so that exp never overflows (exp(v) /
      // (1 + exp(v)) below zero); here an overflow is harmless: below v = -88.7, exp(-v) is inf
      // and the result 0 where the reference's is under 3e-39. One exp, no select on the value
      // (which would build the kernel without loop if-conversion, see c_generator.cpp), and
      // 20% less time in SiLU's kernels than the split form (EfficientNet: 6 million sigmoids).
      return one / (one + math("exp", zero - v));
    }
    case OpCode::Softplus: return softplus(v);
    case OpCode::Softsign: return v / (one + tir::abs(v));
    case OpCode::Gelu: {
      const auto& a = call.attrs_as<ops::GeluAttrs>();
      if (a.approximate == "tanh") {
        const Expr k = c(std::sqrt(2.0 / std::numbers::pi)), k3 = c(0.044715);
        return half * v * (one + math("tanh", k * (v + k3 * v * v * v)));
      }
      if (a.approximate != "none")
        throw Error("nn.gelu: unknown approximate '" + a.approximate + "' (expected none or tanh)");
      return half * v * (one + math("erf", v * c(1.0 / std::numbers::sqrt2)));
    }
    case OpCode::HardSigmoid: {
      const auto& a = call.attrs_as<ops::HardSigmoidAttrs>();
      return std_max(zero, std_min(one, c(a.alpha) * v + c(a.beta)));
    }
    case OpCode::HardSwish: {
      // T(1) / T(6) in T, as the reference.
      const Expr sixth = t == DType::f32 ? tir::float_imm(static_cast<double>(1.0f / 6.0f), t) : c(1.0 / 6.0);
      return v * std_max(zero, std_min(one, v * sixth + half));
    }
    case OpCode::LeakyRelu: {
      // v < 0 ? alpha * v : v (the other term adds a zero).
      const Expr alpha = c(call.attrs_as<ops::AlphaAttrs>().alpha);
      return tir::max(zero, v) + alpha * tir::min(zero, v);
    }
    case OpCode::Elu: {
      // v < 0 ? alpha * (exp(v) - 1) : v (the other term adds a zero).
      const Expr alpha = c(call.attrs_as<ops::AlphaAttrs>().alpha);
      return tir::max(zero, v) + alpha * (math("exp", tir::min(zero, v)) - one);
    }
    case OpCode::Celu: {
      const Expr alpha = c(call.attrs_as<ops::AlphaAttrs>().alpha);
      return std_max(zero, v) + std_min(zero, alpha * (math("exp", v / alpha) - one));
    }
    case OpCode::Selu: {
      const auto& a = call.attrs_as<ops::SeluAttrs>();
      const Expr alpha = c(a.alpha), gamma = c(a.gamma);
      // v > 0 ? gamma * v : gamma * (alpha * exp(v) - alpha) (the other term adds a zero).
      return gamma * tir::max(zero, v) + gamma * (alpha * math("exp", tir::min(zero, v)) - alpha);
    }
    case OpCode::ThresholdedRelu: {
      const Expr alpha = c(call.attrs_as<ops::AlphaAttrs>().alpha);
      return select(v > alpha, v, zero);
    }
    case OpCode::Mish: return v * math("tanh", softplus(v));
    default: break;
  }
  SY_CHECK(false) << "unary_value called for " << ops::op_name(op);
  return v;
}

void register_unary(Registry& r) {
  const OpCode ops_list[] = {
      OpCode::Neg, OpCode::Abs, OpCode::Exp, OpCode::Log, OpCode::Sqrt, OpCode::Reciprocal, OpCode::Sin,
      OpCode::Cos, OpCode::Tan, OpCode::Asin, OpCode::Acos, OpCode::Atan, OpCode::Sinh, OpCode::Cosh,
      OpCode::Asinh, OpCode::Acosh, OpCode::Atanh, OpCode::Tanh, OpCode::Sigmoid, OpCode::Relu, OpCode::Erf,
      OpCode::Floor, OpCode::Ceil, OpCode::Round, OpCode::Sign, OpCode::LogicalNot, OpCode::IsNaN,
      OpCode::IsInf, OpCode::Identity, OpCode::Softplus, OpCode::Softsign, OpCode::Gelu, OpCode::HardSigmoid,
      OpCode::HardSwish, OpCode::LeakyRelu, OpCode::Elu, OpCode::Celu, OpCode::Selu, OpCode::ThresholdedRelu,
      OpCode::Mish, OpCode::Clip, OpCode::Cast};
  for (OpCode op : ops_list) {
    OpImpl impl;
    impl.compute = [](const ir::CallNode& call, const std::vector<te::Tensor>& in) -> std::vector<te::Tensor> {
      const te::Tensor x = in.at(0);
      // Validate attributes and dtypes once, outside the index function.
      Expr probe = unary_value(call, tir::var("probe", x.dtype()));
      (void)probe;
      return {compute_like(call, ops::op_name(call.op),
                           [&](const std::vector<Expr>& i) { return unary_value(call, x(i)); })};
    };
    r.add(op, std::move(impl));
  }
}

}  // namespace sy::topi
