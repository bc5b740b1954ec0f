// Native path end to end on elementwise kernels: broadcasting, dtypes, inlining, tails.
#include <fstream>
#include <iterator>
#include <sstream>

#include "native_test_util.h"
#include "target/host.h"

using namespace sy;
using namespace sy::nativetest;
using te::Expr;

TEST(CodegenCElementwise, BroadcastAddRelu) {
  te::Tensor A = te::placeholder({4, 3, 5}, DType::f32, "A");
  te::Tensor B = te::placeholder({3, 1}, DType::f32, "B");
  te::Tensor C = te::compute({4, 3, 5}, [&](Expr i, Expr j, Expr k) {
    return tir::max(A(i, j, k) + B(j, 0), tir::float_imm(0.0));
  }, "C");
  te::Schedule s({C});
  tir::PrimFunc f = te::lower(s, {A, B, C}, "bcast_add_relu");
  auto m = build_one(f);
  Tensor a = random_tensor({4, 3, 5}, 1), b = random_tensor({3, 1}, 2), c(DType::f32, {4, 3, 5});
  run(*m, "bcast_add_relu", {&a, &b, &c});
  Tensor want(DType::f32, {4, 3, 5});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) {
        const int64_t x = (i * 3 + j) * 5 + k;
        want.data<float>()[x] = std::max(a.data<float>()[x] + b.data<float>()[j], 0.0f);
      }
  expect_close(c, want);
}

TEST(CodegenCElementwise, Float64MathAndFusedParallelVectorLoop) {
  te::Tensor A = te::placeholder({3, 50}, DType::f64, "A");
  te::Tensor B = te::compute({3, 50}, [&](Expr i, Expr j) {
    return tir::tanh(A(i, j)) + tir::abs(A(i, j)) * tir::exp(A(i, j) * 0.5) - tir::sqrt(A(i, j) * A(i, j) + 1.0);
  }, "B");
  te::Schedule s({B});
  auto& b = s[B];
  auto f = b.fuse(b.axis(0), b.axis(1));
  auto [o, in] = b.split(f, 8);  // 150 = 18 * 8 + 6
  b.parallel(o);
  b.vectorize(in);
  auto m = build_one(te::lower(s, {A, B}, "f64_math"));
  Tensor a(DType::f64, {3, 50}), out(DType::f64, {3, 50}), want(DType::f64, {3, 50});
  for (int64_t i = 0; i < a.numel(); ++i) a.data<double>()[i] = std::sin(double(i)) * 3;
  run(*m, "f64_math", {&a, &out});
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<double>()[i];
    want.data<double>()[i] = std::tanh(x) + std::abs(x) * std::exp(x * 0.5) - std::sqrt(x * x + 1.0);
  }
  expect_close(out, want, 1e-12);
}

TEST(CodegenCElementwise, NamesThatCollideWithCAreRenamed) {
  // Tensors named after C keywords, math functions and the generator's helpers.
  te::Tensor A = te::placeholder({8}, DType::f64, "exp");
  te::Tensor B = te::compute({8}, [&](Expr i) { return tir::exp(A(i)); }, "int");
  te::Tensor C = te::compute({8}, [&](Expr i) { return B(i) * 2.0; }, "sy_alloc");
  te::Schedule s({C});
  auto m = build_one(te::lower(s, {A, C}, "collide"));
  EXPECT_NE(m->generated_c().find("const double* restrict exp_1"), std::string::npos) << m->generated_c();
  Tensor a(DType::f64, {8}), c(DType::f64, {8});
  for (int i = 0; i < 8; ++i) a.data<double>()[i] = i * 0.25;
  run(*m, "collide", {&a, &c});
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(c.data<double>()[i], std::exp(i * 0.25) * 2.0);
}

namespace {

// exp(A) and 1 / (1 + exp(-A)) over a vector loop (8 lanes), as SiLU and softmax kernels use it.
tir::PrimFunc exp_kernel(int64_t n) {
  te::Tensor A = te::placeholder({n}, DType::f32, "A");
  te::Tensor B = te::compute({n}, [&](Expr i) { return tir::exp(A(i)); }, "B");
  te::Tensor C = te::compute({n}, [&](Expr i) { return tir::float_imm(1.0) / (tir::float_imm(1.0) + tir::exp(tir::float_imm(0.0) - A(i))); }, "C");
  te::Schedule s({B, C});
  for (te::Tensor t : {B, C}) {
    auto [o, in] = s[t].split(s[t].axis(0), 8);
    s[t].vectorize(in);
  }
  return te::lower(s, {A, B, C}, "exp_sigmoid");
}

// erf(A) over a vector loop, as GELU's epilogue computes it.
tir::PrimFunc erf_kernel(int64_t n) {
  te::Tensor A = te::placeholder({n}, DType::f32, "A");
  te::Tensor B = te::compute({n}, [&](Expr i) { return tir::call("erf", DType::f32, {A(i)}); }, "B");
  te::Schedule s({B});
  auto [o, in] = s[B].split(s[B].axis(0), 8);
  s[B].vectorize(in);
  return te::lower(s, {A, B}, "erf_vec");
}

}  // namespace

TEST(CodegenCElementwise, FloatErfIsAccurateEverywhere) {
  // The generated C's own erf (sy_erff): within 8 ulp of double erf (the fit's bound is 6), odd,
  // exactly +-1 where float erf is (GELU's x * (1 + erf) must be 0 there, NaN at -inf), NaN
  // kept, tiny arguments to the relative precision.
  std::vector<float> xs = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, 3.9f, 3.925f, 3.93f, 4.0f, -4.0f, 10.0f, -10.0f, 1e30f,
                           INFINITY, -INFINITY, NAN};
  for (float x = -4.5f; x < 4.5f; x += 0.0173f) xs.push_back(x);
  const int64_t n = static_cast<int64_t>(xs.size());
  auto m = build_one(erf_kernel(n));
  EXPECT_NE(m->generated_c().find("sy_erff("), std::string::npos);
  Tensor a(DType::f32, {n}), e(DType::f32, {n});
  for (int64_t i = 0; i < n; ++i) a.data<float>()[i] = xs[i];
  run(*m, "erf_vec", {&a, &e});
  for (int64_t i = 0; i < n; ++i) {
    const float x = xs[i], got = e.data<float>()[i];
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(got)) << x;
      continue;
    }
    const double want = std::erf(static_cast<double>(x));
    EXPECT_LE(std::abs(got), 1.0f) << x;
    if (std::abs(x) >= 3.93f) {
      EXPECT_EQ(got, x > 0 ? 1.0f : -1.0f) << x;  // 1 - erf would be x times an ulp
    }
    EXPECT_NEAR(got, want, 8.0 * std::abs(want) * 5.96e-8 + 1e-45) << x;
  }
}

TEST(CodegenCElementwise, FloatExpIsAccurateAtTheEndsOfItsRange) {
  // The generated C's own exp (sy_expf): within 2 ulp of double exp over the float range, exact
  // 0 and inf beyond it, NaN kept, denormal results.
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 10.0f, -10.0f, 88.72f, 88.73f, 89.0f, 89.5f, -87.3f, -100.0f,
                           -103.9f, -104.5f, 1e9f, -1e9f, INFINITY, -INFINITY, NAN};
  for (float x = -103.0f; x < 88.7f; x += 0.37f) xs.push_back(x);
  const int64_t n = static_cast<int64_t>(xs.size());
  auto m = build_one(exp_kernel(n));
  Tensor a(DType::f32, {n}), e(DType::f32, {n}), sg(DType::f32, {n});
  for (int64_t i = 0; i < n; ++i) a.data<float>()[i] = xs[i];
  run(*m, "exp_sigmoid", {&a, &e, &sg});
  for (int64_t i = 0; i < n; ++i) {
    const float x = xs[i], got = e.data<float>()[i], sig = sg.data<float>()[i];
    const double want = std::exp(static_cast<double>(x)), want_sig = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(got) && std::isnan(sig)) << x;
    } else if (want > 3.4028234e38) {
      EXPECT_EQ(got, INFINITY) << x;
    } else if (want < 1.4e-45 / 2) {
      EXPECT_EQ(got, 0.0f) << x;
    } else {
      // 2 ulp of the float result, or one ulp of the smallest denormal
      EXPECT_NEAR(got, want, std::max(2.0 * std::abs(want) * 5.96e-8, 1.5e-45)) << x;
    }
    if (!std::isnan(x)) {
      EXPECT_NEAR(sig, want_sig, 2.0 * want_sig * 5.96e-8 + 1e-38) << x;
    }
  }
}

TEST(CodegenCElementwise, LoopsCallingExpAreVectorizedOnEveryIsa) {
  // A loop whose exp GCC cannot vectorize runs a lane at a time: sy_expf's range ends written as
  // selects became branches, and on AVX2 (no masked arithmetic) SiLU ran 6x slower. GCC's own
  // report on the generated C, for the AVX2 and the host's flags: every loop calling sy_expf
  // or sy_erff is vectorized.
  const std::string src = codegen::generate_c({exp_kernel(64), erf_kernel(64)});
  const auto dir = std::filesystem::temp_directory_path() / ("sy-vec-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string c = (dir / "k.c").string(), log = (dir / "k.log").string();
  { std::ofstream(c) << src; }
  std::vector<int> exp_lines;
  {
    std::istringstream in(src);
    std::string line;
    for (int k = 1; std::getline(in, line); ++k)
      if ((line.find("sy_expf(") != std::string::npos || line.find("sy_erff(") != std::string::npos) &&
          line.find("static inline") == std::string::npos && line.find("  return ") == std::string::npos)
        exp_lines.push_back(k);
  }
  ASSERT_EQ(exp_lines.size(), 3u) << src;
  std::vector<std::vector<std::string>> isas = {{"-march=x86-64-v3"}, target::host().compiler_flags()};
  for (const auto& isa : isas) {
    std::vector<std::string> argv = {"cc", "-O3", "-fPIC", "-fopenmp", "-fno-math-errno", "-std=gnu11", "-fwrapv",
                                     "-fopt-info-vec-optimized", "-c", "-o", (dir / "k.o").string(), c};
    argv.insert(argv.begin() + 1, isa.begin(), isa.end());
    ASSERT_EQ(codegen::run_command(argv, log), 0);
    std::ifstream in(log);
    const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // GCC names the loop's statement, or its for line just above.
    for (int l : exp_lines)
      EXPECT_TRUE(report.find("k.c:" + std::to_string(l) + ":") != std::string::npos ||
                  report.find("k.c:" + std::to_string(l - 1) + ":") != std::string::npos)
          << isa[0] << ": the loop at line " << l << " is not vectorized\n" << report;
  }
  std::filesystem::remove_all(dir);
}
