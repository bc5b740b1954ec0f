// sy_libxsmm_gemm: Y = act(X . B + bias) with libxsmm's JIT kernels over register-sized blocks.
//
// libxsmm is column-major, so the row-major Y [M, N] is computed as its transpose Y^T [N, M] =
// B^T [N, K] . X^T [K, M]: X and Y are read and written in place, and the "A" operand is B^T in
// column-major, i.e. B [K, N] row-major as it is (a matmul's right operand) or a dense weight W
// [N, K] transposed. A constant B is packed once, at init, into panels of BN columns ([N/BN][K][BN])
// so each kernel call reads one contiguous panel. Blocks of BN x BM outputs run in parallel
// (OpenMP, the kernels' thread pool), K in steps of KB (beta 0, then 1), and the bias and
// activation are applied to each block while it is in cache.
#include "backends/libxsmm/libxsmm_gemm.h"

#include <libxsmm.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "strategy/externs.h"

namespace sy::backends::libxsmm {

namespace {

// Blocks of Y^T: BN rows (N), BM columns (M), K in steps of KB. On a Xeon (AVX-512) the BERT
// encoder's GEMMs ran at 125-136 GFLOP/s on one core and 255-275 on two for every shape from
// 32 to 128 rows, 32 to 128 columns and 128 to 768 steps (libxsmm picks the register blocking
// inside); 128-row panels lost 5-15%.
constexpr int64_t kBN = 64, kBM = 32, kKB = 256;

using Kernel = libxsmm_smmfunction;

struct Gemm {
  GemmMode mode = GemmMode::Dense;
  Epilogue epilogue = Epilogue::None;
  bool has_bias = false;
  int64_t batch = 1, M = 0, N = 0, K = 0;
  bool b_batched = false;        // matmul: B has the batch (else one B for every batch)
  std::vector<float> packed;     // a constant B: [ceil(N/BN)][K][BN], panel tails zero-padded
  // Kernels by (n rows of Y^T, m columns, k, beta): a block's shape decides which one runs.
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, Kernel> kernels;

  Kernel kernel(int64_t bn, int64_t bm, int64_t kb, int beta) const { return kernels.at({bn, bm, kb, beta}); }
};

int64_t prod(const int64_t* d, int64_t from, int64_t to) {
  int64_t p = 1;
  for (int64_t i = from; i < to; ++i) p *= d[i];
  return p;
}

std::once_flag g_init;

Kernel dispatch(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int beta) {
  std::call_once(g_init, [] { libxsmm_init(); });
  const float alpha = 1.0f, b = static_cast<float>(beta);
  const int flags = LIBXSMM_GEMM_FLAGS('N', 'N'), prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
  const libxsmm_blasint la = lda, lb = ldb, lc = ldc;
  Kernel f = libxsmm_smmdispatch(static_cast<libxsmm_blasint>(m), static_cast<libxsmm_blasint>(n),
                                 static_cast<libxsmm_blasint>(k), &la, &lb, &lc, &alpha, &b, &flags, &prefetch);
  if (!f)
    throw std::runtime_error("libxsmm has no kernel for a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                             std::to_string(k) + " block (no JIT for this CPU?)");
  return f;
}

void* gemm_init(const sy_extern_site* s, char* err, size_t err_size) {
  try {
    if (s->num_attrs != 3 || s->num_buffers < 3 || s->num_buffers > 4) throw std::runtime_error("unexpected site");
    for (int i = 0; i < s->num_buffers; ++i)
      if (s->dtypes[i] != SY_EXTERN_F32 || s->ranks[i] < 1) throw std::runtime_error("expected float32 tensors");
    auto g = std::make_unique<Gemm>();
    g->mode = static_cast<GemmMode>(s->attrs[0]);
    g->epilogue = static_cast<Epilogue>(s->attrs[1]);
    g->has_bias = s->attrs[2] != 0;
    if (g->has_bias != (s->num_buffers == 4)) throw std::runtime_error("the bias attribute and the buffers disagree");
    const int out = s->num_buffers - 1;
    const int64_t *x = s->shapes[0], *b = s->shapes[1], *y = s->shapes[out];
    const int64_t xr = s->ranks[0], br = s->ranks[1], yr = s->ranks[out];
    if (xr < 2 || yr != xr) throw std::runtime_error("expected data of rank >= 2 and an output of the same rank");
    g->K = x[xr - 1];
    g->N = y[yr - 1];
    if (g->mode == GemmMode::Dense) {
      if (br != 2 || b[0] != g->N || b[1] != g->K) throw std::runtime_error("dense: expected a weight [N, K]");
      g->M = prod(y, 0, yr - 1);
      if (!s->constants[1]) throw std::runtime_error("dense: the weight must be a model constant");
    } else {
      if (br < 2 || b[br - 2] != g->K || b[br - 1] != g->N) throw std::runtime_error("matmul: operands do not chain");
      g->M = x[xr - 2];
      g->batch = prod(y, 0, yr - 2);
      const int64_t bb = prod(b, 0, br - 2);
      if (bb != 1 && bb != g->batch) throw std::runtime_error("matmul: B's batch is neither 1 nor the output's");
      if (bb != 1 && (br != yr || !std::equal(b, b + br - 2, y))) throw std::runtime_error("matmul: B's batch dims differ");
      if (prod(x, 0, xr - 2) != g->batch) throw std::runtime_error("matmul: A's batch is not the output's");
      g->b_batched = bb != 1;
      if (!g->b_batched) {  // one B for every batch: the batches' rows are one taller A (row-major)
        g->M *= g->batch;
        g->batch = 1;
      }
    }
    if (g->has_bias && (s->ranks[2] != 1 || s->shapes[2][0] != g->N)) throw std::runtime_error("expected a bias [N]");
    const int64_t lim = int64_t{1} << 31;
    if (g->M >= lim || g->N >= lim || g->K >= lim || g->M == 0 || g->N == 0 || g->K == 0)
      throw std::runtime_error("GEMM dims out of range");
    // A constant B (every dense; a matmul by a weight) packed into panels of BN columns of B^T.
    const bool pack = s->constants[1] != nullptr && !g->b_batched;
    if (pack) {
      const float* src = static_cast<const float*>(s->constants[1]);
      const int64_t panels = (g->N + kBN - 1) / kBN;
      g->packed.assign(static_cast<size_t>(panels * g->K * kBN), 0.0f);
      for (int64_t p = 0; p < panels; ++p)
        for (int64_t k = 0; k < g->K; ++k)
          for (int64_t j = 0; j < kBN && p * kBN + j < g->N; ++j) {
            const int64_t n = p * kBN + j;
            g->packed[static_cast<size_t>((p * g->K + k) * kBN + j)] =
                g->mode == GemmMode::Dense ? src[n * g->K + k] : src[k * g->N + n];
          }
    }
    // Every block shape: BN or the N tail, BM or the M tail, KB or the K tail; beta 0 and 1.
    const int64_t lda = pack ? kBN : g->N;
    for (int64_t bn : {std::min(kBN, g->N), g->N % kBN})
      for (int64_t bm : {std::min(kBM, g->M), g->M % kBM})
        for (int64_t kb : {std::min(kKB, g->K), g->K % kKB})
          for (int beta : {0, 1})
            if (bn > 0 && bm > 0 && kb > 0 && !g->kernels.count({bn, bm, kb, beta}))
              g->kernels[{bn, bm, kb, beta}] = dispatch(bn, bm, kb, lda, g->K, g->N, beta);
    return g.release();
  } catch (const std::exception& e) {
    std::snprintf(err, err_size, "libxsmm gemm: %s", e.what());
  }
  return nullptr;
}

}  // namespace
}  // namespace sy::backends::libxsmm

// glibc's vector variants of erff and tanhf (libmvec), as the generated kernels use them: the
// epilogue's loop then runs 16 (AVX-512), 8 (AVX2) or 4 lanes at a time instead of one call per
// element (a scalar erff per output made a GELU-fused encoder GEMM 20% slower than unfused).
extern "C" {
#pragma omp declare simd notinbranch
float erff(float);
#pragma omp declare simd notinbranch
float tanhf(float);
}

namespace sy::backends::libxsmm {
namespace {

// row[n] = act(row[n] + bias[n]) (bias may be null), cloned per ISA level and picked at load.
__attribute__((target_clones("avx512f", "avx2", "default"))) void epilogue(float* row, const float* bias, int64_t n,
                                                                            Epilogue e) {
  switch (e) {
    case Epilogue::None:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) row[i] += bias[i];
      break;
    case Epilogue::Relu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const float v = row[i] + (bias ? bias[i] : 0.0f);
        row[i] = v > 0.0f ? v : 0.0f;
      }
      break;
    case Epilogue::GeluErf:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const float v = row[i] + (bias ? bias[i] : 0.0f);
        row[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
      }
      break;
    case Epilogue::GeluTanh:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const float v = row[i] + (bias ? bias[i] : 0.0f);
        row[i] = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
      }
      break;
  }
}

int32_t gemm_run(void* state, void* const* buffers) {
  const Gemm& g = *static_cast<const Gemm*>(state);
  const float* X = static_cast<const float*>(buffers[0]);
  const float* B = static_cast<const float*>(buffers[1]);
  const float* bias = g.has_bias ? static_cast<const float*>(buffers[2]) : nullptr;
  float* Y = static_cast<float*>(buffers[g.has_bias ? 3 : 2]);
  const int64_t NB = (g.N + kBN - 1) / kBN, MB = (g.M + kBM - 1) / kBM;
  const int64_t blocks = g.batch * NB * MB;
  const bool packed = !g.packed.empty();
  // Panels outer, row blocks inner: a thread's consecutive blocks share their panel of B.
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t bt = i / (NB * MB), nb = i / MB % NB, mb = i % MB;
    const int64_t n0 = nb * kBN, m0 = mb * kBM;
    const int64_t bn = std::min(kBN, g.N - n0), bm = std::min(kBM, g.M - m0);
    const float* x = X + (bt * g.M + m0) * g.K;
    float* y = Y + (bt * g.M + m0) * g.N + n0;
    for (int64_t k0 = 0; k0 < g.K; k0 += kKB) {
      const int64_t kb = std::min(kKB, g.K - k0);
      const float* a = packed ? g.packed.data() + (nb * g.K + k0) * kBN
                              : B + (g.b_batched ? bt * g.K * g.N : 0) + k0 * g.N + n0;
      g.kernel(bn, bm, kb, k0 == 0 ? 0 : 1)(a, x + k0, y);
    }
    if (bias || g.epilogue != Epilogue::None)
      for (int64_t m = 0; m < bm; ++m) epilogue(y + m * g.N, bias ? bias + n0 : nullptr, bn, g.epilogue);
  }
  return 0;
}

void gemm_destroy(void* state) { delete static_cast<Gemm*>(state); }

}  // namespace

void register_gemm_extern() {
  strategy::register_stateful_extern(kGemmExtern, {gemm_init, gemm_run, gemm_destroy,
                                                   "libxsmm " + std::to_string(LIBXSMM_VERSION_MAJOR) + "." +
                                                       std::to_string(LIBXSMM_VERSION_MINOR)});
}

}  // namespace sy::backends::libxsmm
