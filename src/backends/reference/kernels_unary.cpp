// Reference kernels of the unary elementwise ops: math functions, activations, clip and cast.
#include <cmath>
#include <limits>
#include <numbers>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

using ops::OpCode;

template <typename TI, typename TO, typename F>
void map(const Tensor& x, Tensor& out, F f) {
  const TI* in = ptr<TI>(x);
  TO* o = ptr<TO>(out);
  const int64_t n = x.numel();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) o[i] = f(in[i]);
}

// Value conversion with numpy's semantics where C++ would be undefined: float -> int truncates
// through int64 and wraps to the narrower type; NaN -> 0; anything -> bool is "!= 0".
template <typename TO, typename TI>
TO convert(TI v) {
  if constexpr (std::is_same_v<TO, bool>) {
    return v != TI(0);
  } else if constexpr (std::is_integral_v<TO> && std::is_floating_point_v<TI>) {
    if (std::isnan(v)) return TO(0);
    constexpr double lo = -9223372036854775808.0;  // -2^63
    double d = static_cast<double>(v);
    if (d < lo) return static_cast<TO>(std::numeric_limits<int64_t>::min());
    if (d >= -lo) return static_cast<TO>(std::numeric_limits<int64_t>::max());
    return static_cast<TO>(static_cast<int64_t>(d));
  } else {
    return static_cast<TO>(v);
  }
}

Tensor cast(const Tensor& x, DType to) {
  Tensor out(to, x.shape());
  dispatch_dtype(x.dtype(), [&](auto ti) {
    using TI = decltype(ti);
    dispatch_dtype(to, [&](auto to_tag) {
      using TO = decltype(to_tag);
      map<TI, TO>(x, out, [](TI v) { return convert<TO, TI>(v); });
    });
  });
  return out;
}

bool is_float_math(OpCode op) {
  switch (op) {
    case OpCode::Neg: case OpCode::Abs: case OpCode::Relu: case OpCode::Sign: case OpCode::Identity:
    case OpCode::Clip: case OpCode::Cast: case OpCode::LogicalNot: case OpCode::IsNaN:
    case OpCode::IsInf:
      return false;
    default:
      return true;
  }
}

// Ops computed in the floating-point type T.
template <typename T>
void float_math(OpCode op, const ir::Attrs& attrs, const Tensor& x, Tensor& out) {
  const T zero = 0, one = 1, half = T(0.5);
  switch (op) {
    case OpCode::Exp: return map<T, T>(x, out, [](T v) { return std::exp(v); });
    case OpCode::Log: return map<T, T>(x, out, [](T v) { return std::log(v); });
    case OpCode::Sqrt: return map<T, T>(x, out, [](T v) { return std::sqrt(v); });
    case OpCode::Reciprocal: return map<T, T>(x, out, [=](T v) { return one / v; });
    case OpCode::Sin: return map<T, T>(x, out, [](T v) { return std::sin(v); });
    case OpCode::Cos: return map<T, T>(x, out, [](T v) { return std::cos(v); });
    case OpCode::Tan: return map<T, T>(x, out, [](T v) { return std::tan(v); });
    case OpCode::Asin: return map<T, T>(x, out, [](T v) { return std::asin(v); });
    case OpCode::Acos: return map<T, T>(x, out, [](T v) { return std::acos(v); });
    case OpCode::Atan: return map<T, T>(x, out, [](T v) { return std::atan(v); });
    case OpCode::Sinh: return map<T, T>(x, out, [](T v) { return std::sinh(v); });
    case OpCode::Cosh: return map<T, T>(x, out, [](T v) { return std::cosh(v); });
    case OpCode::Asinh: return map<T, T>(x, out, [](T v) { return std::asinh(v); });
    case OpCode::Acosh: return map<T, T>(x, out, [](T v) { return std::acosh(v); });
    case OpCode::Atanh: return map<T, T>(x, out, [](T v) { return std::atanh(v); });
    case OpCode::Tanh: return map<T, T>(x, out, [](T v) { return std::tanh(v); });
    case OpCode::Sigmoid:
      // Split by sign so that exp never overflows.
      return map<T, T>(x, out, [=](T v) {
        if (v >= zero) return one / (one + std::exp(-v));
        T e = std::exp(v);
        return e / (one + e);
      });
    case OpCode::Erf: return map<T, T>(x, out, [](T v) { return std::erf(v); });
    case OpCode::Floor: return map<T, T>(x, out, [](T v) { return std::floor(v); });
    case OpCode::Ceil: return map<T, T>(x, out, [](T v) { return std::ceil(v); });
    // nearbyint in the default rounding mode rounds half to even, as ONNX Round.
    case OpCode::Round: return map<T, T>(x, out, [](T v) { return std::nearbyint(v); });
    case OpCode::Softplus:
      return map<T, T>(x, out, [=](T v) {
        return v > zero ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
      });
    case OpCode::Softsign: return map<T, T>(x, out, [=](T v) { return v / (one + std::abs(v)); });
    case OpCode::Gelu: {
      const auto& a = attrs_as<ops::GeluAttrs>(attrs);
      if (a.approximate == "tanh") {
        const T k = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
        const T c = T(0.044715);
        return map<T, T>(x, out, [=](T v) { return half * v * (one + std::tanh(k * (v + c * v * v * v))); });
      }
      if (a.approximate != "none")
        throw Error("nn.gelu: unknown approximate '" + a.approximate + "' (expected none or tanh)");
      const T inv_sqrt2 = static_cast<T>(1.0 / std::numbers::sqrt2);
      return map<T, T>(x, out, [=](T v) { return half * v * (one + std::erf(v * inv_sqrt2)); });
    }
    case OpCode::HardSigmoid: {
      const auto& a = attrs_as<ops::HardSigmoidAttrs>(attrs);
      const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
      return map<T, T>(x, out, [=](T v) { return std::max(zero, std::min(one, alpha * v + beta)); });
    }
    case OpCode::HardSwish: {
      const T sixth = T(1) / T(6);
      return map<T, T>(x, out, [=](T v) { return v * std::max(zero, std::min(one, v * sixth + half)); });
    }
    case OpCode::LeakyRelu: {
      const T alpha = static_cast<T>(attrs_as<ops::AlphaAttrs>(attrs).alpha);
      return map<T, T>(x, out, [=](T v) { return v < zero ? alpha * v : v; });
    }
    case OpCode::Elu: {
      const T alpha = static_cast<T>(attrs_as<ops::AlphaAttrs>(attrs).alpha);
      return map<T, T>(x, out, [=](T v) { return v < zero ? alpha * (std::exp(v) - one) : v; });
    }
    case OpCode::Celu: {
      const T alpha = static_cast<T>(attrs_as<ops::AlphaAttrs>(attrs).alpha);
      return map<T, T>(x, out, [=](T v) {
        return std::max(zero, v) + std::min(zero, alpha * (std::exp(v / alpha) - one));
      });
    }
    case OpCode::Selu: {
      const auto& a = attrs_as<ops::SeluAttrs>(attrs);
      const T alpha = static_cast<T>(a.alpha), gamma = static_cast<T>(a.gamma);
      return map<T, T>(x, out, [=](T v) { return v > zero ? gamma * v : gamma * (alpha * std::exp(v) - alpha); });
    }
    case OpCode::ThresholdedRelu: {
      const T alpha = static_cast<T>(attrs_as<ops::AlphaAttrs>(attrs).alpha);
      return map<T, T>(x, out, [=](T v) { return v > alpha ? v : zero; });
    }
    case OpCode::Mish:
      return map<T, T>(x, out, [=](T v) {
        T sp = v > zero ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
        return v * std::tanh(sp);
      });
    default: break;
  }
  SY_CHECK(false) << "float_math called for " << ops::op_name(op);
}

// Ops defined for every numeric dtype, computed natively in T.
template <typename T>
void native(OpCode op, const ir::Attrs& attrs, const Tensor& x, Tensor& out) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kSigned = std::is_signed_v<T> && !std::is_same_v<T, bool>;
  switch (op) {
    case OpCode::Neg:
      if constexpr (kFloat) return map<T, T>(x, out, [](T v) { return -v; });
      else return map<T, T>(x, out, [](T v) { return wrap_sub<T>(T(0), v); });
    case OpCode::Abs:
      if constexpr (kFloat) return map<T, T>(x, out, [](T v) { return std::abs(v); });
      else if constexpr (kSigned) return map<T, T>(x, out, [](T v) { return v < 0 ? wrap_sub<T>(T(0), v) : v; });
      else return map<T, T>(x, out, [](T v) { return v; });
    case OpCode::Relu:
      // NaN stays NaN (as np.maximum(x, 0)).
      return map<T, T>(x, out, [](T v) { return v < T(0) ? T(0) : v; });
    case OpCode::Sign:
      return map<T, T>(x, out, [](T v) {
        if constexpr (kFloat) {
          if (std::isnan(v)) return v;
        }
        return static_cast<T>((T(0) < v) - (v < T(0)));
      });
    case OpCode::Identity:
      return map<T, T>(x, out, [](T v) { return v; });
    case OpCode::Clip: {
      const auto& a = attrs_as<ops::ClipAttrs>(attrs);
      const double lo = a.min, hi = a.max;
      // np.clip: min(max(x, lo), hi); NaN passes through; lo > hi gives hi.
      return map<T, T>(x, out, [=](T v) {
        double d = static_cast<double>(v);
        if (d < lo) v = convert<T, double>(lo);
        if (static_cast<double>(v) > hi) v = convert<T, double>(hi);
        return v;
      });
    }
    case OpCode::LogicalNot:
      return map<T, bool>(x, out, [](T v) { return !(v != T(0)); });
    case OpCode::IsNaN:
      return map<T, bool>(x, out, [](T v) {
        if constexpr (kFloat) return static_cast<bool>(std::isnan(v));
        else return false;
      });
    case OpCode::IsInf: {
      const auto& a = attrs_as<ops::IsInfAttrs>(attrs);
      const bool pos = a.detect_positive, neg = a.detect_negative;
      return map<T, bool>(x, out, [=](T v) {
        if constexpr (kFloat) return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
        else return false;
      });
    }
    default: break;
  }
  SY_CHECK(false) << "native unary called for " << ops::op_name(op);
}

}  // namespace

Tensor unary(OpCode op, const ir::Attrs& attrs, const Tensor& x, const ir::Type& out_type) {
  if (op == OpCode::Cast) return cast(x, attrs_as<ops::CastAttrs>(attrs).to);
  Tensor out = make_output(out_type);
  SY_CHECK(out.numel() == x.numel()) << ops::op_name(op) << ": output type " << ir::type_str(out_type)
                                     << " does not match input " << shape_str(x.shape());
  if (is_float_math(op)) {
    if (x.dtype() == DType::f32) {
      float_math<float>(op, attrs, x, out);
    } else if (x.dtype() == DType::f64) {
      float_math<double>(op, attrs, x, out);
    } else {
      // Integer inputs of math functions: compute in double, convert back as numpy would.
      Tensor xd = cast(x, DType::f64);
      Tensor yd(DType::f64, x.shape());
      float_math<double>(op, attrs, xd, yd);
      return cast(yd, out.dtype());
    }
    return out;
  }
  if (op == OpCode::LogicalNot || op == OpCode::IsNaN || op == OpCode::IsInf) {
    SY_CHECK(out.dtype() == DType::boolean) << ops::op_name(op) << " must produce bool";
  } else {
    SY_CHECK(out.dtype() == x.dtype()) << ops::op_name(op) << ": output dtype differs from input";
  }
  dispatch_dtype(x.dtype(), [&](auto tag) { native<decltype(tag)>(op, attrs, x, out); });
  return out;
}

}  // namespace sy::reference::detail
