// Reference kernels of reductions (sum, mean, max, min, prod, L1, L2, sum-square, log-sum,
// log-sum-exp), arg max/min, top-k and cumulative sum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

using ops::OpCode;

template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

// Reduction of R contiguous values. Floats accumulate in double; integer sums and products wrap.
template <typename T>
T reduce_row(OpCode op, const T* p, int64_t R) {
  using Lim = std::numeric_limits<T>;
  switch (op) {
    case OpCode::ReduceMax:
    case OpCode::ReduceMin: {
      const bool mx = op == OpCode::ReduceMax;
      T m;
      if constexpr (std::is_floating_point_v<T>) m = mx ? -Lim::infinity() : Lim::infinity();
      else m = mx ? Lim::lowest() : Lim::max();
      for (int64_t i = 0; i < R; ++i) {
        if (is_nan(p[i])) return p[i];  // NaN propagates, as np.maximum.reduce
        if (mx ? p[i] > m : p[i] < m) m = p[i];
      }
      return m;
    }
    case OpCode::ReduceSum:
      if constexpr (kIsInt<T>) {
        T s = 0;
        for (int64_t i = 0; i < R; ++i) s = wrap_add<T>(s, p[i]);
        return s;
      }
      break;
    case OpCode::ReduceProd:
      if constexpr (kIsInt<T>) {
        T s = 1;
        for (int64_t i = 0; i < R; ++i) s = wrap_mul<T>(s, p[i]);
        return s;
      }
      break;
    default: break;
  }
  double r = 0.0;
  switch (op) {
    case OpCode::ReduceSum:
    case OpCode::ReduceMean:
      for (int64_t i = 0; i < R; ++i) r += static_cast<double>(p[i]);
      if (op == OpCode::ReduceMean) r /= static_cast<double>(R);
      break;
    case OpCode::ReduceProd:
      r = 1.0;
      for (int64_t i = 0; i < R; ++i) r *= static_cast<double>(p[i]);
      break;
    case OpCode::ReduceL1:
      for (int64_t i = 0; i < R; ++i) r += std::abs(static_cast<double>(p[i]));
      break;
    case OpCode::ReduceL2:
    case OpCode::ReduceSumSquare:
      for (int64_t i = 0; i < R; ++i) r += static_cast<double>(p[i]) * static_cast<double>(p[i]);
      if (op == OpCode::ReduceL2) r = std::sqrt(r);
      break;
    case OpCode::ReduceLogSum:
      for (int64_t i = 0; i < R; ++i) r += static_cast<double>(p[i]);
      r = std::log(r);
      break;
    case OpCode::ReduceLogSumExp: {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < R; ++i) m = std::max(m, static_cast<double>(p[i]));
      if (std::isinf(m)) {  // empty, all -inf, or some +inf: the maximum is the answer
        r = m;
        for (int64_t i = 0; i < R; ++i)
          if (is_nan(p[i])) r = static_cast<double>(p[i]);
        break;
      }
      for (int64_t i = 0; i < R; ++i) r += std::exp(static_cast<double>(p[i]) - m);
      r = m + std::log(r);
      break;
    }
    default: SY_CHECK(false) << "reduce_row called for " << ops::op_name(op);
  }
  if constexpr (kIsInt<T>) {
    if (std::isnan(r)) return T(0);
    // Through int64: a double outside T's range converts undefined (clang's UBSan reports it),
    // an int64 converts modulo 2^bits, which is how the native kernels' integer sums wrap.
    return static_cast<T>(static_cast<int64_t>(std::clamp(r, -9.2e18, 9.2e18)));
  } else {
    return static_cast<T>(r);
  }
}

std::vector<int64_t> checked_axes(const std::vector<int64_t>& axes, int64_t rank, const char* op) {
  std::vector<int64_t> v = axes;
  for (size_t i = 0; i < v.size(); ++i) {
    SY_CHECK(v[i] >= 0 && v[i] < rank) << op << ": axis " << v[i] << " out of range for rank " << rank;
    SY_CHECK(i == 0 || v[i] > v[i - 1]) << op << ": axes must be sorted and unique";
  }
  return v;
}

}  // namespace

Tensor reduce(OpCode op, const ops::ReduceAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  const std::string& name = ops::op_name(op);
  std::vector<int64_t> axes = checked_axes(a.axes, x.ndim(), name.c_str());
  // Move the reduced axes last so that each output element reduces one contiguous row.
  std::vector<int64_t> perm;
  std::vector<bool> reduced(static_cast<size_t>(x.ndim()), false);
  for (int64_t d : axes) reduced[static_cast<size_t>(d)] = true;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!reduced[static_cast<size_t>(d)]) perm.push_back(d);
  int64_t R = 1;
  for (int64_t d : axes) {
    perm.push_back(d);
    R *= x.shape()[static_cast<size_t>(d)];
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  const Tensor xt = identity ? x : transpose_tensor(x, perm);
  const int64_t rows = out.numel();
  SY_CHECK(rows * R == x.numel() || (R == 0 && x.numel() == 0))
      << name << ": output " << shape_str(out.shape()) << " does not match reducing " << shape_str(x.shape());
  SY_CHECK(out.dtype() == x.dtype()) << name << ": output dtype differs from input";
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(xt);
    T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t i = 0; i < rows; ++i) o[i] = reduce_row<T>(op, in + i * R, R);
  });
  return out;
}

Tensor arg_reduce(OpCode op, const ops::ArgReduceAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  const std::string& name = ops::op_name(op);
  SY_CHECK(out.dtype() == DType::i64) << name << " must produce int64";
  SY_CHECK(a.axis >= 0 && a.axis < x.ndim()) << name << ": axis out of range";
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t D = x.shape()[axis];
  const int64_t outer = dims_product(x.shape(), 0, axis);
  const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
  SY_CHECK(out.numel() == outer * inner) << name << ": output shape mismatch";
  if (D == 0 && out.numel() > 0) throw Error(name + ": cannot reduce an empty axis");
  const bool is_max = op == OpCode::ArgMax;
  const bool last = a.select_last_index;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(x);
    int64_t* o = ptr<int64_t>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t oi = 0; oi < outer * inner; ++oi) {
      const T* p = in + (oi / inner) * D * inner + oi % inner;
      int64_t best = 0;
      // NaN wins (first NaN, or last with select_last_index), as numpy's argmax/argmin.
      for (int64_t d = 1; d < D; ++d) {
        const T v = p[d * inner], b = p[best * inner];
        bool take;
        if (is_nan(b)) take = last && is_nan(v);
        else if (is_nan(v)) take = true;
        else if (v == b) take = last;
        else take = is_max ? v > b : v < b;
        if (take) best = d;
      }
      o[oi] = best;
    }
  });
  return out;
}

std::vector<Tensor> topk(const ops::TopKAttrs& a, const Tensor& x, const ir::Type& out_type) {
  SY_CHECK(out_type->kind == ir::TypeKind::Tuple && out_type->fields.size() == 2) << "topk: expects a 2-tuple type";
  Tensor values = make_output(out_type->fields[0]);
  Tensor indices = make_output(out_type->fields[1]);
  SY_CHECK(indices.dtype() == DType::i64 && values.dtype() == x.dtype()) << "topk: output dtypes";
  SY_CHECK(a.axis >= 0 && a.axis < x.ndim()) << "topk: axis out of range";
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t D = x.shape()[axis];
  if (a.k < 0 || a.k > D)
    throw Error("topk: k = " + std::to_string(a.k) + " is out of range for an axis of size " + std::to_string(D));
  const int64_t k = a.k;
  const int64_t outer = dims_product(x.shape(), 0, axis);
  const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
  SY_CHECK(values.numel() == outer * k * inner) << "topk: output shape mismatch";
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(x);
    T* ov = ptr<T>(values);
    int64_t* oi = ptr<int64_t>(indices);
    // NaN orders above every number (as np.sort); equal values keep the lower index first.
    auto less = [](T u, T v) { return !is_nan(u) && (is_nan(v) || u < v); };
    const bool largest = a.largest;  // a local here: clang 14 rejects `a` inside the omp region
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t line = 0; line < outer * inner; ++line) {
      const int64_t o = line / inner, i = line % inner;
      const T* p = in + o * D * inner + i;
      std::vector<int64_t> order(static_cast<size_t>(D));
      std::iota(order.begin(), order.end(), 0);
      auto cmp = [&](int64_t l, int64_t r) {
        const T u = p[l * inner], v = p[r * inner];
        if (largest ? less(v, u) : less(u, v)) return true;
        if (largest ? less(u, v) : less(v, u)) return false;
        return l < r;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t src = order[static_cast<size_t>(j)];
        ov[(o * k + j) * inner + i] = p[src * inner];
        oi[(o * k + j) * inner + i] = src;
      }
    }
  });
  return {values, indices};
}

Tensor cumsum(const ops::CumSumAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(a.axis >= 0 && a.axis < x.ndim()) << "cumsum: axis out of range";
  SY_CHECK(out.shape() == x.shape() && out.dtype() == x.dtype()) << "cumsum: output type mismatch";
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t D = x.shape()[axis];
  const int64_t outer = dims_product(x.shape(), 0, axis);
  const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t line = 0; line < outer * inner; ++line) {
      const int64_t base = (line / inner) * D * inner + line % inner;
      Acc acc = 0;
      for (int64_t s = 0; s < D; ++s) {
        const int64_t d = a.reverse ? D - 1 - s : s;
        const T v = in[base + d * inner];
        if (!a.exclusive) acc = wrap_add<Acc>(acc, static_cast<Acc>(v));
        o[base + d * inner] = static_cast<T>(acc);
        if (a.exclusive) acc = wrap_add<Acc>(acc, static_cast<Acc>(v));
      }
    }
  });
  return out;
}

// Determinants by Gaussian elimination with partial pivoting (the largest magnitude in the
// column), in double: the product of the pivots, negated per row swap; 0 once a column has none.
Tensor det(const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  const int64_t M = x.shape().back();
  const int64_t count = out.numel();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = ptr<T>(x);
      T* o = ptr<T>(out);
      std::vector<double> a(static_cast<size_t>(M * M));
      for (int64_t b = 0; b < count; ++b) {
        for (int64_t i = 0; i < M * M; ++i) a[static_cast<size_t>(i)] = static_cast<double>(in[b * M * M + i]);
        auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * M + c)]; };
        double d = 1.0;
        for (int64_t k = 0; k < M; ++k) {
          int64_t p = k;
          for (int64_t r = k + 1; r < M; ++r)
            if (std::fabs(at(r, k)) > std::fabs(at(p, k))) p = r;
          if (at(p, k) == 0.0) {
            d = 0.0;
            break;
          }
          if (p != k) {
            for (int64_t c = 0; c < M; ++c) std::swap(at(p, c), at(k, c));
            d = -d;
          }
          d *= at(k, k);
          for (int64_t r = k + 1; r < M; ++r) {
            const double f = at(r, k) / at(k, k);
            for (int64_t c = k + 1; c < M; ++c) at(r, c) -= f * at(k, c);
          }
        }
        o[b] = static_cast<T>(d);
      }
    }
  });
  return out;
}

}  // namespace sy::reference::detail
