// dense and matmul through OpenBLAS's cblas_sgemm as extern implementations. A dense weight
// (packed by topi::pack_weight) is unpacked once per call site, at load, into the plain [N, K]
// that sgemm reads transposed; a matmul runs one sgemm per batch (B broadcast when its batch is 1).
#include <cblas.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "codegen/c/c_generator.h"
#include "ops/op.h"
#include "strategy/externs.h"
#include "strategy/strategy.h"
#include "te/tensor.h"
#include "topi/topi.h"

namespace sy::externs {

namespace {

struct Gemm {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  bool dense = false, b_batched = false, has_bias = false;
  std::vector<float> weight;  // dense: W [N, K]
};

// OpenBLAS's OpenMP build takes one caller at a time (NUM_PARALLEL=1: concurrent calls from
// several threads risk corrupting its buffers), so concurrent runs of an executable wait here.
std::mutex& blas_mutex() {
  static std::mutex m;
  return m;
}

int64_t prod(const int64_t* d, int64_t from, int64_t to) {
  int64_t p = 1;
  for (int64_t i = from; i < to; ++i) p *= d[i];
  return p;
}

void* gemm_init(const sy_extern_site* s, char* err, size_t err_size) {
  try {
    if (s->num_attrs != 1 || (s->num_buffers != 3 && s->num_buffers != 4)) throw std::runtime_error("unexpected site");
    for (int i = 0; i < s->num_buffers; ++i)
      if (s->dtypes[i] != SY_EXTERN_F32 || s->ranks[i] < 1) throw std::runtime_error("expected f32 tensors");
    auto g = std::make_unique<Gemm>();
    const int64_t block = s->attrs[0];
    g->has_bias = s->num_buffers == 4;
    const int out = s->num_buffers - 1;
    const int64_t *x = s->shapes[0], *w = s->shapes[1], *y = s->shapes[out];
    const int64_t xr = s->ranks[0], wr = s->ranks[1], yr = s->ranks[out];
    if (block > 0) {  // dense: W packed [ceil(N/B), K, B]
      if (wr != 3 || w[2] != block) throw std::runtime_error("dense: expected a packed weight");
      g->dense = true;
      g->K = x[xr - 1];
      g->N = y[yr - 1];
      g->M = prod(y, 0, yr - 1);
      if (!s->constants[1]) throw std::runtime_error("dense: a packed weight must be a constant");
      const float* p = static_cast<const float*>(s->constants[1]);
      g->weight.resize(static_cast<size_t>(g->N * g->K));
      topi::unpack_rows(p, g->N, g->K, block, g->weight.data());
    } else {  // matmul: same-rank operands (checked by why_not)
      if (xr < 2 || xr != wr || yr != xr) throw std::runtime_error("matmul: operands of different ranks");
      g->M = x[xr - 2];
      g->K = x[xr - 1];
      g->N = w[wr - 1];
      g->batch = prod(y, 0, yr - 2);
      g->b_batched = prod(w, 0, wr - 2) != 1;
    }
    const int64_t lim = int64_t{1} << 31;
    if (g->M >= lim || g->N >= lim || g->K >= lim) throw std::runtime_error("a GEMM dim beyond int");
    return g.release();
  } catch (const std::exception& e) {
    std::snprintf(err, err_size, "%s", e.what());
  }
  return nullptr;
}

int32_t gemm_run(void* state, void* const* b) {
  const Gemm& g = *static_cast<const Gemm*>(state);
  const float* A = static_cast<const float*>(b[0]);
  float* C = static_cast<float*>(b[g.has_bias ? 3 : 2]);
  std::lock_guard<std::mutex> lock(blas_mutex());
  float beta = 0.0f;
  if (g.has_bias) {  // C = bias, then C += A . B: the bias costs no pass of its own
    const float* bias = static_cast<const float*>(b[2]);
    for (int64_t m = 0; m < g.batch * g.M; ++m) std::memcpy(C + m * g.N, bias, static_cast<size_t>(g.N) * sizeof(float));
    beta = 1.0f;
  }
  if (g.dense) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(g.M), static_cast<int>(g.N), static_cast<int>(g.K),
                1.0f, A, static_cast<int>(g.K), g.weight.data(), static_cast<int>(g.K), beta, C, static_cast<int>(g.N));
    return 0;
  }
  const float* B = static_cast<const float*>(b[1]);
  for (int64_t i = 0; i < g.batch; ++i)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(g.M), static_cast<int>(g.N), static_cast<int>(g.K),
                1.0f, A + i * g.M * g.K, static_cast<int>(g.K), B + (g.b_batched ? i * g.K * g.N : 0), static_cast<int>(g.N),
                beta, C + i * g.M * g.N, static_cast<int>(g.N));
  return 0;
}

void gemm_destroy(void* state) { delete static_cast<Gemm*>(state); }

const ir::TypeNode& type_of(const ir::Expr& e) { return ir::as_tensor(e->type); }

std::string why_not_dense(const ir::CallNode& c) {
  std::string why = topi::why_not_packed_dense(c);
  if (!why.empty()) return why;
  for (int64_t d : type_of(c.args[0]).shape)
    if (d >= (1ll << 31)) return "a dim beyond int";
  return "";
}

// One sgemm per batch: operands of one rank >= 2, B's batch equal to A's or all 1, A's not broadcast.
std::string why_not_matmul(const ir::CallNode& c) {
  const ir::TypeNode &a = type_of(c.args[0]), &b = type_of(c.args[1]);
  if (a.dtype != DType::f32 || b.dtype != DType::f32) return "not f32";
  if (a.shape.size() < 2 || a.shape.size() != b.shape.size()) return "operands of different ranks or vectors";
  bool b_one = true, same = true;
  for (size_t i = 0; i + 2 < a.shape.size(); ++i) {
    b_one &= b.shape[i] == 1;
    same &= a.shape[i] == b.shape[i];
  }
  if (!b_one && !same) return "batch dims broadcast other than B's all 1";
  if (shape_numel(a.shape) == 0 || shape_numel(b.shape) == 0) return "an empty operand";
  const int64_t lim = 1ll << 31;
  for (const Shape* s : {&a.shape, &b.shape})
    for (int64_t d : *s)
      if (d >= lim) return "a dim beyond int";
  return "";
}

std::string library_version() {
  std::string v = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ..."
  const size_t sp = v.find(' ', v.find(' ') + 1);
  return sp == std::string::npos ? v : v.substr(0, sp);
}

}  // namespace

void register_openblas_externs() {
  const std::string lib = library_version();
  strategy::register_stateful_extern("sy_openblas_gemm", {gemm_init, gemm_run, gemm_destroy, lib});
  auto add = [&](ops::OpCode op, const char* name, std::string (*why)(const ir::CallNode&), bool dense) {
    topi::OpImpl impl;
    impl.name = name;
    impl.compute = [dense](const ir::CallNode& c, const std::vector<te::Tensor>& in) {
      const int64_t block = dense ? type_of(c.args[1]).shape[2] : 0;
      return std::vector<te::Tensor>{te::stateful_extern_op(dense ? "dense_openblas" : "matmul_openblas", ir::as_tensor(c.type).shape,
                                                            DType::f32, in, "sy_openblas_gemm", {block})};
    };
    impl.why_not = [why](const ir::CallNode& c, const target::Target&) { return why(c); };
    // Below every native implementation: chosen by a measured record, never by default.
    impl.priority = [](const ir::CallNode&, const target::Target&) { return 0; };
    impl.library = lib;
    strategy::register_implementation(op, std::move(impl));
  };
  add(ops::OpCode::Dense, "dense.openblas", why_not_dense, true);
  add(ops::OpCode::MatMul, "matmul.openblas", why_not_matmul, false);
}

}  // namespace sy::externs
