// Reference kernels of the broadcasting binary ops (arithmetic, comparisons, logic) and where.
#include <cmath>
#include <limits>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

using ops::OpCode;

template <typename TA, typename TB, typename TO, typename F>
void zip(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const TA* pa = ptr<TA>(a);
  const TB* pb = ptr<TB>(b);
  TO* po = ptr<TO>(out);
  broadcast_rows<2>(out.shape(), {&a.shape(), &b.shape()},
                    [&](int64_t o, std::array<int64_t, 2> off, int64_t n, std::array<int64_t, 2> st) {
                      const TA* x = pa + off[0];
                      const TB* y = pb + off[1];
                      TO* z = po + o;
                      // Specialised runs so that the common cases vectorise.
                      if (st[0] == 1 && st[1] == 1) {
                        for (int64_t j = 0; j < n; ++j) z[j] = f(x[j], y[j]);
                      } else if (st[0] == 1 && st[1] == 0) {
                        const TB yv = *y;
                        for (int64_t j = 0; j < n; ++j) z[j] = f(x[j], yv);
                      } else if (st[0] == 0 && st[1] == 1) {
                        const TA xv = *x;
                        for (int64_t j = 0; j < n; ++j) z[j] = f(xv, y[j]);
                      } else {
                        for (int64_t j = 0; j < n; ++j) z[j] = f(x[j * st[0]], y[j * st[1]]);
                      }
                    });
}

template <typename T>
bool has_zero(const Tensor& t) {
  const T* p = ptr<T>(t);
  for (int64_t i = 0; i < t.numel(); ++i)
    if (p[i] == T(0)) return true;
  return false;
}

template <typename T>
T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrap_sub<T>(T(0), a);  // avoids the INT_MIN / -1 trap
  }
  return static_cast<T>(a / b);  // C++ truncates toward zero, as ONNX
}

template <typename T>
T python_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
    return r;
  } else if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
    T r = static_cast<T>(a % b);
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

template <typename T>
T c_fmod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else if constexpr (std::is_signed_v<T>) {
    return b == T(-1) ? T(0) : static_cast<T>(a % b);
  } else {
    return static_cast<T>(a % b);
  }
}

// Exact integer power (wrapping like numpy); negative exponents truncate 1/a^-e toward zero.
template <typename T, typename E>
T int_pow(T a, E e) {
  if (e < E(0)) {
    if (a == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (a == T(-1)) return (static_cast<int64_t>(e) % 2 == 0) ? T(1) : T(-1);
    }
    return T(0);
  }
  T result = 1, base = a;
  auto n = static_cast<uint64_t>(e);
  while (n) {
    if (n & 1u) result = wrap_mul<T>(result, base);
    base = wrap_mul<T>(base, base);
    n >>= 1u;
  }
  return result;
}

template <typename T>
T cvt_from_double(double d) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (std::isnan(d)) return T(0);
    if (d <= -9223372036854775808.0) return static_cast<T>(std::numeric_limits<int64_t>::min());
    if (d >= 9223372036854775808.0) return static_cast<T>(std::numeric_limits<int64_t>::max());
    return static_cast<T>(static_cast<int64_t>(d));
  } else {
    return static_cast<T>(d);
  }
}

Tensor power(const Tensor& a, const Tensor& b, Tensor out) {
  SY_CHECK(out.dtype() == a.dtype()) << "power: output dtype must be the base dtype";
  dispatch_dtype(a.dtype(), [&](auto ta) {
    using TA = decltype(ta);
    dispatch_dtype(b.dtype(), [&](auto tb) {
      using TB = decltype(tb);
      constexpr bool kIntA = std::is_integral_v<TA> && !std::is_same_v<TA, bool>;
      constexpr bool kIntB = std::is_integral_v<TB> && !std::is_same_v<TB, bool>;
      if constexpr (kIntA && kIntB) {
        zip<TA, TB, TA>(a, b, out, [](TA x, TB y) { return int_pow<TA, TB>(x, y); });
      } else if constexpr (std::is_floating_point_v<TA> && std::is_same_v<TA, TB>) {
        zip<TA, TB, TA>(a, b, out, [](TA x, TB y) { return std::pow(x, y); });
      } else {
        zip<TA, TB, TA>(a, b, out, [](TA x, TB y) {
          return cvt_from_double<TA>(std::pow(static_cast<double>(x), static_cast<double>(y)));
        });
      }
    });
  });
  return out;
}

template <typename T>
void arith(OpCode op, const ir::Attrs& attrs, const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  switch (op) {
    case OpCode::Add: return zip<T, T, T>(a, b, out, [](T x, T y) { return wrap_add<T>(x, y); });
    case OpCode::Sub: return zip<T, T, T>(a, b, out, [](T x, T y) { return wrap_sub<T>(x, y); });
    case OpCode::Mul: return zip<T, T, T>(a, b, out, [](T x, T y) { return wrap_mul<T>(x, y); });
    case OpCode::Div:
      if constexpr (kInt) {
        if (has_zero<T>(b)) throw Error("divide: integer division by zero");
        return zip<T, T, T>(a, b, out, [](T x, T y) { return int_div<T>(x, y); });
      } else {
        return zip<T, T, T>(a, b, out, [](T x, T y) { return static_cast<T>(x / y); });
      }
    case OpCode::Mod: {
      bool fmod = attrs_as<ops::ModAttrs>(attrs).fmod;
      if constexpr (kInt) {
        if (has_zero<T>(b)) throw Error("mod: integer modulo by zero");
      }
      if constexpr (std::is_same_v<T, bool>) {
        throw Error("mod: not defined for bool");
      } else {
        if (fmod) return zip<T, T, T>(a, b, out, [](T x, T y) { return c_fmod<T>(x, y); });
        return zip<T, T, T>(a, b, out, [](T x, T y) { return python_mod<T>(x, y); });
      }
    }
    // NaN in either operand gives NaN, as np.maximum / np.minimum.
    case OpCode::Maximum:
      return zip<T, T, T>(a, b, out, [](T x, T y) {
        if constexpr (kFloat) {
          if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
        }
        return x < y ? y : x;
      });
    case OpCode::Minimum:
      return zip<T, T, T>(a, b, out, [](T x, T y) {
        if constexpr (kFloat) {
          if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
        }
        return y < x ? y : x;
      });
    case OpCode::PRelu:
      return zip<T, T, T>(a, b, out, [](T x, T slope) { return x < T(0) ? wrap_mul<T>(slope, x) : x; });
    default: break;
  }
  SY_CHECK(false) << "arith called for " << ops::op_name(op);
}

template <typename T>
void compare(OpCode op, const Tensor& a, const Tensor& b, Tensor& out) {
  switch (op) {
    case OpCode::Equal: return zip<T, T, bool>(a, b, out, [](T x, T y) { return x == y; });
    case OpCode::Less: return zip<T, T, bool>(a, b, out, [](T x, T y) { return x < y; });
    case OpCode::LessEqual: return zip<T, T, bool>(a, b, out, [](T x, T y) { return x <= y; });
    case OpCode::Greater: return zip<T, T, bool>(a, b, out, [](T x, T y) { return x > y; });
    case OpCode::GreaterEqual: return zip<T, T, bool>(a, b, out, [](T x, T y) { return x >= y; });
    case OpCode::LogicalAnd:
      return zip<T, T, bool>(a, b, out, [](T x, T y) { return x != T(0) && y != T(0); });
    case OpCode::LogicalOr:
      return zip<T, T, bool>(a, b, out, [](T x, T y) { return x != T(0) || y != T(0); });
    case OpCode::LogicalXor:
      return zip<T, T, bool>(a, b, out, [](T x, T y) { return (x != T(0)) != (y != T(0)); });
    default: break;
  }
  SY_CHECK(false) << "compare called for " << ops::op_name(op);
}

bool is_predicate(OpCode op) {
  switch (op) {
    case OpCode::Equal: case OpCode::Less: case OpCode::LessEqual: case OpCode::Greater:
    case OpCode::GreaterEqual: case OpCode::LogicalAnd: case OpCode::LogicalOr: case OpCode::LogicalXor:
      return true;
    default:
      return false;
  }
}

}  // namespace

Tensor binary(OpCode op, const ir::Attrs& attrs, const Tensor& a, const Tensor& b, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  if (op == OpCode::Pow) return power(a, b, out);
  SY_CHECK(a.dtype() == b.dtype()) << ops::op_name(op) << ": operands of " << dtype_name(a.dtype())
                                   << " and " << dtype_name(b.dtype());
  if (is_predicate(op)) {
    SY_CHECK(out.dtype() == DType::boolean) << ops::op_name(op) << " must produce bool";
    dispatch_dtype(a.dtype(), [&](auto tag) { compare<decltype(tag)>(op, a, b, out); });
  } else {
    SY_CHECK(out.dtype() == a.dtype()) << ops::op_name(op) << ": output dtype differs from operands";
    dispatch_dtype(a.dtype(), [&](auto tag) { arith<decltype(tag)>(op, attrs, a, b, out); });
  }
  return out;
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(cond.dtype() == DType::boolean && x.dtype() == y.dtype() && out.dtype() == x.dtype())
      << "where: expects (bool, T, T) -> T";
  const bool* pc = ptr<bool>(cond);
  dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) {
    using U = decltype(tag);
    const U* px = ptr<U>(x);
    const U* py = ptr<U>(y);
    U* po = ptr<U>(out);
    broadcast_rows<3>(out.shape(), {&cond.shape(), &x.shape(), &y.shape()},
                      [&](int64_t o, std::array<int64_t, 3> off, int64_t n, std::array<int64_t, 3> st) {
                        for (int64_t j = 0; j < n; ++j)
                          po[o + j] = pc[off[0] + j * st[0]] ? px[off[1] + j * st[1]] : py[off[2] + j * st[2]];
                      });
  });
  return out;
}

}  // namespace sy::reference::detail
