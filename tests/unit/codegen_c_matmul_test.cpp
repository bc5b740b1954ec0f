// Matmul through the native path: a tiled, vectorized, parallel schedule with a register tile
// (cache_write + compute_at), schedule knobs, numerics against plain loops, and a rough GFLOP/s.
#include <chrono>
#include <cstdlib>

#include <omp.h>

#include "native_test_util.h"

using namespace sy;
using namespace sy::nativetest;
using te::Expr;

namespace {

struct Matmul {
  te::Tensor A, B, C;
  Matmul(int64_t M, int64_t N, int64_t K) {
    A = te::placeholder({M, K}, DType::f32, "A");
    B = te::placeholder({K, N}, DType::f32, "B");
    auto k = te::reduce_axis(K, "k");
    C = te::compute({M, N}, [&](Expr i, Expr j) { return te::sum(A(i, k.var) * B(k.var, j), {k}); }, "C");
  }
};

// The schedule template: a (tile_m x tile_n) register tile accumulated in C.local over k, the
// tile's columns in vector-width pieces (unrolled) of vec lanes each, tiles in parallel.
tir::PrimFunc matmul_kernel(const Matmul& mm, te::Knobs& knobs, const std::string& name) {
  const int64_t tm = knobs.define("tile_m", {4, 6, 8, 2, 1});
  const int64_t tn = knobs.define("tile_n", {64, 32, 16, 48, 128});
  const int64_t vec = knobs.define("vec", {16, 8});
  const int64_t kb = knobs.define("tile_k", {4, 1, 8});
  te::Schedule s({mm.C});
  te::Tensor CL = s.cache_write(mm.C);
  auto& c = s[mm.C];
  auto [io, jo, ii, ji] = c.tile(c.axis(0), c.axis(1), tm, tn);
  auto [jio, jii] = c.split(ji, vec);
  c.vectorize(jii);
  auto fused = c.fuse(io, jo);
  c.parallel(fused);
  s[CL].compute_at(c, fused);
  auto& cl = s[CL];
  auto [ko, ki] = cl.split(cl.reduce_axis(0), kb);
  auto [cjo, cji] = cl.split(cl.axis(1), vec);
  cl.reorder({ko, ki, cl.axis(0), cjo, cji});
  cl.unroll(ki);
  cl.unroll(cl.axis(0));
  cl.unroll(cjo);
  cl.vectorize(cji);
  return te::lower(s, {mm.A, mm.B, mm.C}, name);
}

Tensor matmul_ref(const Tensor& a, const Tensor& b) {
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  Tensor c(DType::f32, {M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a.data<float>()[i * K + k]) * b.data<float>()[k * N + j];
      c.data<float>()[i * N + j] = float(s);
    }
  return c;
}

}  // namespace

TEST(CodegenCMatmul, KnobsDescribeTheScheduleSpace) {
  Matmul mm(64, 64, 64);
  te::Knobs knobs;
  knobs.set("tile_n", 32);
  matmul_kernel(mm, knobs, "mm_knobs");
  EXPECT_EQ(knobs.space().size(), 4u);
  EXPECT_EQ(knobs.space_size(), 5 * 5 * 2 * 3);
  EXPECT_EQ(knobs.to_string(), "tile_m=4 tile_n=32 vec=16 tile_k=4");
  te::Knobs bad;
  bad.set("tile_m", 3);
  EXPECT_THROW(matmul_kernel(mm, bad, "mm_bad"), Error);
}

TEST(CodegenCMatmul, TiledScheduleWithTailsMatchesLoops) {
  // Sizes divisible by nothing in the schedule: every tile dimension has a tail.
  Matmul mm(37, 75, 29);
  te::Knobs knobs;
  auto m = build_one(matmul_kernel(mm, knobs, "mm_tails"));
  Tensor a = random_tensor({37, 29}, 11), b = random_tensor({29, 75}, 12), c(DType::f32, {37, 75});
  run(*m, "mm_tails", {&a, &b, &c});
  expect_close(c, matmul_ref(a, b), 1e-4);
}

TEST(CodegenCMatmul, Perf256) {
  const int64_t n = 256;
  Matmul mm(n, n, n);
  te::Knobs knobs;
  if (const char* cfg = std::getenv("SY_MATMUL_KNOBS")) {  // e.g. "tile_m=6 tile_n=32"
    std::istringstream in(cfg);
    std::string kv;
    while (in >> kv) knobs.set(kv.substr(0, kv.find('=')), std::stoll(kv.substr(kv.find('=') + 1)));
  }
  tir::PrimFunc f = matmul_kernel(mm, knobs, "mm256");
  auto m = build_one(f);
  Tensor a = random_tensor({n, n}, 21), b = random_tensor({n, n}, 22), c(DType::f32, {n, n});
  run(*m, "mm256", {&a, &b, &c});
  expect_close(c, matmul_ref(a, b), 1e-4);
  // Rough numbers, not asserted: the machine is shared and noisy. One thread, then all.
  const int all_threads = omp_get_max_threads();
  for (int threads : {1, all_threads}) {
    omp_set_num_threads(threads);
    std::vector<double> times;
    for (int rep = 0; rep < 30; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      run(*m, "mm256", {&a, &b, &c});
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double med = times[times.size() / 2];
    std::printf("[ perf     ] matmul 256x256x256 (%s), %d thread(s): median %.1f us, %.1f GFLOP/s\n",
                knobs.to_string().c_str(), threads, med * 1e6, 2.0 * n * n * n / med / 1e9);
  }
  omp_set_num_threads(all_threads);
}
