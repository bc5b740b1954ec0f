// Native path end to end on elementwise kernels: broadcasting, dtypes, inlining, tails.
#include "native_test_util.h"

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
