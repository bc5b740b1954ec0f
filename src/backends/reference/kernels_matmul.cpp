// Reference kernels of matmul (numpy semantics, batched with broadcasting) and nn.dense.
#include <algorithm>
#include <sstream>

#include "backends/reference/kernels_util.h"

namespace sy::reference::detail {
namespace {

// Columns of the output handled by one task: rows of one output are split into blocks so that
// a single-row product (batch 1) still uses every core.
constexpr int64_t kColBlock = 256;

template <typename T>
T madd(T acc, T a, T b) {
  return wrap_add<T>(acc, wrap_mul<T>(a, b));
}

// Rows of the output computed together: each loaded element of b then serves kRows rows.
constexpr int64_t kRows = 4;

// out[b, i, j] = sum_k a[b, i, k] * bm[b, k, j]; a_off/b_off give each batch's base offset.
// Loop order i-k-j (the innermost loop runs along rows of b and of the output).
template <typename T>
void matmul_impl(const T* a, const T* bm, T* out, int64_t batches, const std::vector<int64_t>& a_off,
                 const std::vector<int64_t>& b_off, int64_t M, int64_t K, int64_t N) {
  const int64_t col_blocks = (N + kColBlock - 1) / kColBlock;
  const int64_t row_blocks = (M + kRows - 1) / kRows;
  const int64_t tasks = batches * row_blocks * col_blocks;
#pragma omp parallel for schedule(static) if (batches * M * N * K > kParallelGrain)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t cb = t % col_blocks;
    const int64_t rb = (t / col_blocks) % row_blocks;
    const int64_t bi = t / (col_blocks * row_blocks);
    const int64_t j0 = cb * kColBlock, j1 = std::min(N, j0 + kColBlock);
    const int64_t i0 = rb * kRows, i1 = std::min(M, i0 + kRows);
    const T* abase = a + a_off[static_cast<size_t>(bi)];
    const T* bbase = bm + b_off[static_cast<size_t>(bi)];
    T* obase = out + bi * M * N;
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = j0; j < j1; ++j) obase[i * N + j] = T(0);
    if (i1 - i0 == kRows) {
      T* o0 = obase + i0 * N;
      T* o1 = o0 + N;
      T* o2 = o1 + N;
      T* o3 = o2 + N;
      const T* a0 = abase + i0 * K;
      for (int64_t k = 0; k < K; ++k) {
        const T x0 = a0[k], x1 = a0[K + k], x2 = a0[2 * K + k], x3 = a0[3 * K + k];
        const T* brow = bbase + k * N;
        for (int64_t j = j0; j < j1; ++j) {
          const T bv = brow[j];
          o0[j] = madd<T>(o0[j], x0, bv);
          o1[j] = madd<T>(o1[j], x1, bv);
          o2[j] = madd<T>(o2[j], x2, bv);
          o3[j] = madd<T>(o3[j], x3, bv);
        }
      }
    } else {
      for (int64_t i = i0; i < i1; ++i) {
        T* orow = obase + i * N;
        const T* arow = abase + i * K;
        for (int64_t k = 0; k < K; ++k) {
          const T aik = arow[k];
          const T* brow = bbase + k * N;
          for (int64_t j = j0; j < j1; ++j) orow[j] = madd<T>(orow[j], aik, brow[j]);
        }
      }
    }
  }
}

// Rows of x handled together so that each weight row is reused from cache.
constexpr int64_t kRowBlock = 8;

template <typename T>
void dense_impl(const T* x, const T* w, const T* bias, T* out, int64_t M, int64_t K, int64_t N) {
  const int64_t row_blocks = (M + kRowBlock - 1) / kRowBlock;
#pragma omp parallel for collapse(2) schedule(static) if (M * N * K > kParallelGrain)
  for (int64_t rb = 0; rb < row_blocks; ++rb) {
    for (int64_t n = 0; n < N; ++n) {
      const T* wrow = w + n * K;
      const int64_t i1 = std::min(M, (rb + 1) * kRowBlock);
      for (int64_t i = rb * kRowBlock; i < i1; ++i) {
        const T* xrow = x + i * K;
        T acc = T(0);
        if constexpr (std::is_floating_point_v<T>) {
#pragma omp simd reduction(+ : acc)
          for (int64_t k = 0; k < K; ++k) acc += xrow[k] * wrow[k];
        } else {
          for (int64_t k = 0; k < K; ++k) acc = madd<T>(acc, xrow[k], wrow[k]);
        }
        out[i * N + n] = bias ? wrap_add<T>(acc, bias[n]) : acc;
      }
    }
  }
}

std::string shapes_str(const char* op, const Tensor& a, const Tensor& b) {
  std::ostringstream os;
  os << op << ": incompatible shapes " << shape_str(a.shape()) << " and " << shape_str(b.shape());
  return os.str();
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(a.dtype() == b.dtype() && out.dtype() == a.dtype()) << "matmul: dtype mismatch";
  SY_CHECK(a.ndim() >= 1 && b.ndim() >= 1) << "matmul: scalar operand";
  // 1-D operands become matrices ([K] -> [1, K] on the left, [K, 1] on the right).
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  SY_CHECK(bs[bs.size() - 2] == K) << shapes_str("matmul", a, b);
  Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  Shape batch(std::max(a_batch.size(), b_batch.size()), 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    auto dim = [&](const Shape& s) {
      size_t lead = batch.size() - s.size();
      return i < lead ? int64_t{1} : s[i - lead];
    };
    int64_t da = dim(a_batch), db = dim(b_batch);
    SY_CHECK(da == db || da == 1 || db == 1) << shapes_str("matmul", a, b);
    batch[i] = std::max(da, db);
  }
  const int64_t batches = shape_numel(batch);
  SY_CHECK(out.numel() == batches * M * N) << shapes_str("matmul", a, b) << " for output " << shape_str(out.shape());
  // Offset of each batch in a and b (broadcast batch axes repeat the same matrix).
  std::vector<int64_t> a_off(static_cast<size_t>(batches)), b_off(static_cast<size_t>(batches));
  std::vector<int64_t> sa = broadcast_strides(a_batch, batch), sb = broadcast_strides(b_batch, batch);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    a_off[static_cast<size_t>(bi)] = oa * M * K;
    b_off[static_cast<size_t>(bi)] = ob * K * N;
  }
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("matmul: not defined for bool");
    } else {
      matmul_impl<T>(ptr<T>(a), ptr<T>(b), ptr<T>(out), batches, a_off, b_off, M, K, N);
    }
  });
  return out;
}

Tensor dense(const Args& args, const ir::Type& out_type) {
  const Tensor& x = args.at(0);
  const Tensor& w = args.at(1);
  Tensor out = make_output(out_type);
  SY_CHECK(x.ndim() >= 1 && w.ndim() == 2) << shapes_str("nn.dense", x, w);
  const int64_t K = x.shape().back(), N = w.shape()[0];
  SY_CHECK(w.shape()[1] == K) << shapes_str("nn.dense", x, w);
  const int64_t M = dims_product(x.shape(), 0, x.shape().size() - 1);
  SY_CHECK(out.numel() == M * N) << shapes_str("nn.dense", x, w) << " for output " << shape_str(out.shape());
  SY_CHECK(x.dtype() == w.dtype() && out.dtype() == x.dtype()) << "nn.dense: dtype mismatch";
  const Tensor* bias = args.size() > 2 ? &args[2] : nullptr;
  SY_CHECK(!bias || (bias->numel() == N && bias->dtype() == x.dtype())) << "nn.dense: bias must have " << N
                                                                         << " elements";
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("nn.dense: not defined for bool");
    } else {
      dense_impl<T>(ptr<T>(x), ptr<T>(w), bias ? ptr<T>(*bias) : nullptr, ptr<T>(out), M, K, N);
    }
  });
  return out;
}

}  // namespace sy::reference::detail
