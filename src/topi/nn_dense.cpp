// Native computes and schedules of nn.dense (x . w^T + bias) and matmul (numpy semantics, batch
// broadcasting). Both are computed as register tiles (tile_m rows x tile_n columns, the columns
// in vectors of the target) accumulated over the whole K, tiles in parallel with the weight panel
// outermost so that it stays in cache across the rows. nn.dense reads its weight packed as
// [ceil(N/B)][K][B], B = one vector (a stage of the kernel, or given pre-packed as a 3-d
// parameter; see prepack_constants in topi.h); matmul reads its right operand's rows directly.
#include <algorithm>

#include "ops/op.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

std::vector<Tensor> dense(const ir::CallNode& c, const std::vector<Tensor>& in, const target::Target& target) {
  const Tensor& x = in.at(0);
  const Tensor& w = in.at(1);
  const bool prepacked = w.ndim() == 3;
  const int64_t kBlock = prepacked ? w.shape()[2] : weight_block(target);
  const Shape& os = out_shape(c);
  const int64_t K = x.shape().back(), N = os.back();
  const DType t = x.dtype();
  if (t == DType::boolean) throw Error("nn.dense: not defined for bool");
  const bool has_bias = in.size() > 2;
  IterVar k = te::reduce_axis(K, "k");
  auto xrow = [&](const std::vector<Expr>& i) {
    std::vector<Expr> j(i.begin(), i.end() - 1);
    j.push_back(k.var);
    return x(j);
  };
  Tensor Y;
  if (t == DType::f32) {
    const int64_t No = (N + kBlock - 1) / kBlock;
    Tensor Wp = w;
    if (!prepacked) {
      Wp = te::compute({No, K, kBlock}, [&](Expr no, Expr kk, Expr ni) -> Expr {
        Expr n = no * kBlock + ni;
        if (N % kBlock == 0) return w(n, kk);
        return tir::select(n < N, w(tir::min(n, idx(N - 1)), kk), fconst(t, 0.0));
      }, "dense_wpack");
    }
    if (os.size() == 3) {
      // (B, S, K) rows flattened to B*S: one GEMM whose register tiles span the batch (the
      // encoder's (S, 1, K) projections would otherwise be S products of one row each). The
      // index (m / S) * S + m % S folds back to m.
      const int64_t S = os[1];
      Tensor Yf = te::compute({os[0] * S, N}, [&](Expr m, Expr n) {
        return te::sum(x(m / S, m % S, k.var) * Wp(n / kBlock, k.var, n % kBlock), {k});
      }, "dense_gemm");
      return {te::compute(os, [&](Expr b, Expr i, Expr n) {
        Expr v = Yf(b * S + i, n);
        return has_bias ? v + in[2](n) : v;
      }, "dense")};
    }
    Y = te::compute(os, [&](const std::vector<Expr>& i) {
      Expr n = i.back();
      return te::sum(xrow(i) * Wp(n / kBlock, k.var, n % kBlock), {k});
    }, "dense_gemm");
  } else {
    if (prepacked) throw Error("nn.dense: a pre-packed weight needs f32 data");
    Y = te::compute(os, [&](const std::vector<Expr>& i) { return te::sum(xrow(i) * w(i.back(), k.var), {k}); },
                    "dense_gemm");
  }
  if (!has_bias) return {Y};
  return {te::compute(os, [&](const std::vector<Expr>& i) { return Y(i) + in[2](i.back()); }, "dense")};
}

std::vector<Tensor> matmul(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const Tensor& A = in.at(0);
  const Tensor& B = in.at(1);
  if (A.dtype() == DType::boolean) throw Error("matmul: not defined for bool");
  const Shape& os = out_shape(c);
  const bool a1 = A.ndim() == 1, b1 = B.ndim() == 1;
  const int64_t K = A.shape().back();
  const size_t out_batch = os.size() - (a1 ? 0 : 1) - (b1 ? 0 : 1);
  IterVar k = te::reduce_axis(K, "k");
  return {te::compute(os, [&](const std::vector<Expr>& i) {
    // Output: batch..., [m], [n].
    std::vector<Expr> ai, bi;
    const size_t ab = a1 ? 0 : A.ndim() - 2, bb = b1 ? 0 : B.ndim() - 2;
    for (size_t d = 0; d < ab; ++d) {
      const size_t od = out_batch - ab + d;
      ai.push_back(A.shape()[d] == 1 ? idx(0) : i[od]);
    }
    for (size_t d = 0; d < bb; ++d) {
      const size_t od = out_batch - bb + d;
      bi.push_back(B.shape()[d] == 1 ? idx(0) : i[od]);
    }
    size_t p = out_batch;
    if (!a1) ai.push_back(i[p++]);
    ai.push_back(k.var);
    bi.push_back(k.var);
    if (!b1) bi.push_back(i[p++]);
    return te::sum(A(ai) * B(bi), {k});
  }, "matmul")};
}

// GEMM-like group: the reduction R (last axis n vectorized, second-to-last m tiled) computed
// per register tile inside the output's loops; the epilogue inlined into the output.
void schedule_gemm(GroupSchedule& g, const char* reduction_name, const char* pack_name) {
  te::Schedule& s = *g.sch;
  const Tensor& anchor = g.anchor_outputs.at(0);
  te::Operation red = find_stage(anchor, reduction_name), pack = find_stage(anchor, pack_name);
  const Shape& os = anchor.shape();
  const bool simple = g.outputs.size() == 1 && g.outputs[0].shape() == os && red && os.size() >= 2 &&
                      red->dtype == DType::f32 && red->shape.size() >= 2 && red->shape.size() <= os.size();
  if (!simple) return schedule_injective(g);
  if (red.get() == g.outputs[0].op().get()) red = s.cache_write(g.outputs[0]).op();
  if (!inline_all_but(g, {red, pack})) return schedule_injective(g);
  te::Knobs local;
  te::Knobs& knobs = g.knobs ? *g.knobs : local;
  te::Stage& out = s[g.outputs[0]];
  // A reduction of lower rank than the output computes the output's leading axes flattened
  // (dense on 3-d data): fuse them likewise, so the tiles below are over the same rows.
  const Shape& rs = red->shape;
  const size_t r = rs.size();
  for (size_t d = r; d < os.size(); ++d) out.fuse(out.leaves()[0], out.leaves()[1]);
  const int64_t M = rs[r - 2], N = rs[r - 1];
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < r; ++d) batch *= rs[d];
  if (pack) {
    te::Stage& p = *s.find(pack.get());
    te::Axis a = p.leaves()[0];
    p.parallel(a);
  }
  // Register tile: tile_m rows x tile_n columns in vectors. With 16 registers (AVX2) the default
  // is 6 rows x 2 vectors: 12 accumulators + 2 weight vectors + 1 broadcast. With 32 (AVX-512) it
  // is 8 x 3: 24 accumulators + 3 + 1, 11 loads per 24 FMAs instead of 8 per 12, which a CPU that
  // issues two 512-bit FMAs a cycle needs: on such a Xeon 8 x 3 ran each of the BERT-style
  // encoder's six dense and matmul kernels 1.11-1.22x faster than 6 x 2. Where 3 vectors leave a
  // large tail of a few panels (N = 64: 48 + 16) and 2 divide N, 2 (there 8 x 2 was faster).
  const int64_t L = g.vector_lanes;
  const bool wide = g.vector_registers >= 32;
  const bool two_divide = N % (2 * L) == 0 && N % (3 * L) != 0 && N <= 8 * L;
  const int64_t tm =
      std::min(M, knobs.define("tile_m", wide ? std::vector<int64_t>{8, 6, 4, 2, 1} : std::vector<int64_t>{6, 4, 8, 2, 1}));
  int64_t tn = knobs.define("tile_n", wide && !two_divide ? std::vector<int64_t>{3 * L, 2 * L, L, 4 * L}
                                                          : std::vector<int64_t>{2 * L, L, 4 * L, 3 * L});
  if (tn % L != 0) throw Error("gemm schedule: tile_n must be a multiple of " + std::to_string(L));
  tn = std::min(tn, (N + L - 1) / L * L);
  te::Axis m = out.leaves()[r - 2], n = out.leaves()[r - 1];
  auto [mo, no, mi, ni] = out.tile(m, n, tm, tn);
  // Weight panel outer, rows inner (default): a panel stays in cache over all the rows; rows
  // outer: a block of rows stays in cache over all the panels (better when the rows are long).
  const bool panel_outer = knobs.define("panel_outer", {1, 0}) == 1;
  // A last panel narrower than tile_n is guarded lane by lane, which GCC does not vectorize. Fused
  // into the parallel loop it would recur every few iterations (a guard in every tile: ViT's
  // 197-token attention ran at 3 GFLOP/s); as its own loop inside, its last iteration is peeled.
  // Only when the batch and the row tiles alone give every core work (a one-row dense has only
  // its panels to split).
  const int64_t row_tiles = batch * ((M + tm - 1) / tm);
  const bool n_tail = N % tn != 0 && row_tiles >= 2 * std::max(1, g.target->cores);
  if (panel_outer && !n_tail) out.reorder({no, mo});
  te::Axis par = panel_outer && !n_tail ? no : mo;
  for (size_t d = r - 2; d-- > 0;) {
    te::Axis lead = out.leaves()[d];
    par = out.fuse(lead, par);
  }
  if (!n_tail) par = out.fuse(par, panel_outer ? mo : no);
  const int64_t par_extent = batch * ((M + tm - 1) / tm) * (n_tail ? 1 : (N + tn - 1) / tn);
  // Worth a fork and a barrier: 1024 outputs, or a long reduction behind fewer (a classifier's
  // one-row dense, 1x2048 by 2048x1000, streams a 8 MB weight: it ran no faster on 2 cores).
  const int64_t K = red->reduce_axes().empty() ? 1 : red->reduce_axes()[0].extent;
  if (par_extent > 1 && (batch * M * N * 64 >= (1 << 16) || batch * M * N * K >= (1 << 18))) out.parallel(par);
  // The epilogue in vectors: left to the C compiler, a row of the tile with a math call (sigmoid's
  // exp, GELU's erf) ran one call per element, 3.3x the dense alone (3136x96 by 96x384).
  out.vectorize(out.split(ni, L).second);
  te::Stage& R = *s.find(red.get());
  R.compute_at(out, n_tail ? no : par);
  // Register tile: k outermost, then rows (unrolled) and column vectors (unrolled, vectorized).
  te::Axis rm = R.leaves()[r - 2], rn = R.leaves()[r - 1];
  auto [rno, rni] = R.split(rn, L);
  R.reorder({R.reduce_axis(0), rm, rno, rni});
  R.unroll(rm);
  R.unroll(rno);
  R.vectorize(rni);
}

}  // namespace

void register_dense(Registry& r) {
  r.add(ops::OpCode::Dense, dense, [](GroupSchedule& g) { schedule_gemm(g, "dense_gemm", "dense_wpack"); });
  r.add(ops::OpCode::MatMul, matmul, [](GroupSchedule& g) { schedule_gemm(g, "matmul", ""); });
}

}  // namespace sy::topi::nn
