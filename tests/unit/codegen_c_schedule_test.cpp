// Native path end to end with schedules: reductions, tails, compute_inline, compute_at, dtypes.
#include "native_test_util.h"

using namespace sy;
using namespace sy::nativetest;
using te::Expr;

namespace {

// Row-wise softmax as four stages: max, exp(x - max), sum, divide.
struct Softmax {
  te::Tensor X, M, E, S, Y;
  Softmax(int64_t rows, int64_t cols) {
    X = te::placeholder({rows, cols}, DType::f32, "X");
    auto k1 = te::reduce_axis(cols, "k");
    M = te::compute({rows}, [&](Expr i) { return te::reduce_max(X(i, k1.var), {k1}); }, "M");
    E = te::compute({rows, cols}, [&](Expr i, Expr j) { return tir::exp(X(i, j) - M(i)); }, "E");
    auto k2 = te::reduce_axis(cols, "k");
    S = te::compute({rows}, [&](Expr i) { return te::sum(E(i, k2.var), {k2}); }, "S");
    Y = te::compute({rows, cols}, [&](Expr i, Expr j) { return E(i, j) / S(i); }, "Y");
  }
};

Tensor softmax_ref(const Tensor& x) {
  const int64_t r = x.shape()[0], c = x.shape()[1];
  Tensor y(DType::f32, {r, c});
  for (int64_t i = 0; i < r; ++i) {
    float m = -INFINITY;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x.data<float>()[i * c + j]);
    double s = 0;
    for (int64_t j = 0; j < c; ++j) s += std::exp(x.data<float>()[i * c + j] - m);
    for (int64_t j = 0; j < c; ++j) y.data<float>()[i * c + j] = float(std::exp(x.data<float>()[i * c + j] - m) / s);
  }
  return y;
}

}  // namespace

TEST(CodegenCSchedule, SoftmaxDefaultSchedule) {
  Softmax sm(7, 33);
  te::Schedule s({sm.Y});
  auto m = build_one(te::lower(s, {sm.X, sm.Y}, "softmax"));
  Tensor x = random_tensor({7, 33}, 3, -4, 4), y(DType::f32, {7, 33});
  run(*m, "softmax", {&x, &y});
  expect_close(y, softmax_ref(x), 1e-5);
}

TEST(CodegenCSchedule, SoftmaxComputeAtRowsParallelVectorized) {
  Softmax sm(9, 100);
  te::Schedule s({sm.Y});
  auto& y = s[sm.Y];
  auto [jo, ji] = y.split(y.axis(1), 16);  // 100 = 6*16 + 4: a tail
  y.vectorize(ji);
  y.parallel(y.axis(0));
  s[sm.M].compute_at(y, y.axis(0));
  s[sm.E].compute_at(y, y.axis(0));
  s[sm.S].compute_at(y, y.axis(0));
  auto& e = s[sm.E];
  auto [eo, ei] = e.split(e.axis(1), 16);
  e.vectorize(ei);
  tir::PrimFunc f = te::lower(s, {sm.X, sm.Y}, "softmax_rows");
  const std::string text = tir::print_func(f);
  EXPECT_NE(text.find("parallel for i in [0, 9)"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate E: float32[1, 100]"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized for"), std::string::npos) << text;
  auto m = build_one(f);
  Tensor x = random_tensor({9, 100}, 4, -4, 4), out(DType::f32, {9, 100});
  run(*m, "softmax_rows", {&x, &out});
  expect_close(out, softmax_ref(x), 1e-5);
}

TEST(CodegenCSchedule, TailsAreGuardedAndPartitioned) {
  te::Tensor A = te::placeholder({37, 29}, DType::f32, "A");
  te::Tensor B = te::compute({37, 29}, [&](Expr i, Expr j) { return A(i, j) * 2.0f + 1.0f; }, "B");
  te::Schedule s({B});
  auto& b = s[B];
  auto [io, jo, ii, ji] = b.tile(b.axis(0), b.axis(1), 8, 8);
  b.vectorize(ji);
  b.unroll(ii);
  tir::PrimFunc f = te::lower(s, {A, B}, "tails");
  // The main tiles carry no guard: only the partitioned tail loops test bounds.
  const std::string text = tir::print_func(f);
  EXPECT_NE(text.find("for i.outer in [0, 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("B[32, j.inner + 24]"), std::string::npos) << text;  // the corner tile, unrolled
  EXPECT_EQ(text.find("if "), std::string::npos) << text;
  auto m = build_one(f);
  Tensor a = random_tensor({37, 29}, 5), out(DType::f32, {37, 29});
  out.data<float>()[0] = 123;
  run(*m, "tails", {&a, &out});
  Tensor want(DType::f32, {37, 29});
  for (int64_t i = 0; i < a.numel(); ++i) want.data<float>()[i] = a.data<float>()[i] * 2 + 1;
  expect_close(out, want);
}

TEST(CodegenCSchedule, ComputeInlineRemovesTheIntermediate) {
  te::Tensor A = te::placeholder({64}, DType::f32, "A");
  te::Tensor T = te::compute({64}, [&](Expr i) { return A(i) + 1.0f; }, "T");
  te::Tensor U = te::compute({64}, [&](Expr i) { return T(i) * T(63 - i); }, "U");
  te::Schedule s({U});
  s[T].compute_inline();
  tir::PrimFunc f = te::lower(s, {A, U}, "inl");
  const std::string text = tir::print_func(f);
  EXPECT_EQ(text.find("allocate"), std::string::npos) << text;
  auto m = build_one(f);
  Tensor a = random_tensor({64}, 6), u(DType::f32, {64});
  run(*m, "inl", {&a, &u});
  Tensor want(DType::f32, {64});
  for (int i = 0; i < 64; ++i) want.data<float>()[i] = (a.data<float>()[i] + 1) * (a.data<float>()[63 - i] + 1);
  expect_close(u, want);
}

TEST(CodegenCSchedule, ComputeAtInfersAStencilRegion) {
  // B is a 3-point stencil over T; T computed per tile of 8 outputs needs 10 elements.
  te::Tensor A = te::placeholder({50}, DType::f32, "A");
  te::Tensor T = te::compute({52}, [&](Expr i) {
    return tir::select(tir::logical_and(i >= 1, i < 51), A(tir::max(i - 1, tir::int_imm(0))), tir::float_imm(0.0));
  }, "T");
  te::Tensor B = te::compute({50}, [&](Expr i) { return T(i) + T(i + 1) + T(i + 2); }, "B");
  te::Schedule s({B});
  auto& b = s[B];
  auto [o, in] = b.split(b.axis(0), 8);
  s[T].compute_at(b, o);
  tir::PrimFunc f = te::lower(s, {A, B}, "stencil");
  const std::string text = tir::print_func(f);
  EXPECT_NE(text.find("allocate T: float32[10]"), std::string::npos) << text;
  auto m = build_one(f);
  Tensor a = random_tensor({50}, 7), out(DType::f32, {50});
  run(*m, "stencil", {&a, &out});
  Tensor want(DType::f32, {50});
  auto t = [&](int64_t i) { return (i >= 1 && i < 51) ? a.data<float>()[i - 1] : 0.0f; };
  for (int64_t i = 0; i < 50; ++i) want.data<float>()[i] = t(i) + t(i + 1) + t(i + 2);
  expect_close(out, want);
}

TEST(CodegenCSchedule, IntegerAndBoolDtypes) {
  te::Tensor A = te::placeholder({10}, DType::i32, "A");
  te::Tensor B = te::placeholder({10}, DType::i64, "B");
  te::Tensor C = te::compute({10}, [&](Expr i) { return tir::cast(DType::i64, A(i)) * B(i) - 3; }, "C");
  te::Tensor D = te::compute({10}, [&](Expr i) { return C(i) > 0; }, "D");
  te::Tensor E = te::compute({10}, [&](Expr i) { return tir::cast(DType::u8, tir::select(D(i), A(i) % 7, A(i) / 3)); }, "E");
  te::Schedule s({C, D, E});
  auto m = build_one(te::lower(s, {A, B, C, D, E}, "ints"));
  Tensor a = Tensor::from_vector<int32_t>({10}, {-9, -5, -1, 0, 1, 2, 5, 8, 13, 20});
  Tensor b = Tensor::from_vector<int64_t>({10}, {3, -2, 7, 1, 1, -4, 2, 0, 1, 100});
  Tensor c(DType::i64, {10}), d(DType::boolean, {10}), e(DType::u8, {10});
  run(*m, "ints", {&a, &b, &c, &d, &e});
  for (int i = 0; i < 10; ++i) {
    const int64_t av = a.data<int32_t>()[i], cv = av * b.data<int64_t>()[i] - 3;
    EXPECT_EQ(c.data<int64_t>()[i], cv) << i;
    EXPECT_EQ(d.data<bool>()[i], cv > 0) << i;
    // floor semantics for / and %
    const int64_t fm = ((av % 7) + 7) % 7, fd = (av - fm) / 7 * 0 + (av >= 0 ? av / 3 : -((-av + 2) / 3));
    EXPECT_EQ(int(e.data<uint8_t>()[i]), int(uint8_t(cv > 0 ? fm : fd))) << i;
  }
}

TEST(CodegenCSchedule, ScalarsAndFullReductions) {
  // Rank-0 tensors: a full max/min/sum reduction to a scalar, then a scalar broadcast back.
  te::Tensor A = te::placeholder({5, 7}, DType::f32, "A");
  te::Tensor T = te::placeholder({}, DType::f32, "T");
  auto r0 = te::reduce_axis(5, "r0"), r1 = te::reduce_axis(7, "r1");
  te::Tensor S = te::compute({}, [&]() { return te::sum(A(r0.var, r1.var), {r0, r1}); }, "S");
  auto q0 = te::reduce_axis(5, "q0"), q1 = te::reduce_axis(7, "q1");
  te::Tensor M = te::compute({}, [&]() { return te::reduce_min(A(q0.var, q1.var), {q0, q1}); }, "M");
  te::Tensor B = te::compute({5, 7}, [&](Expr i, Expr j) { return A(i, j) - M() + S() * T(); }, "B");
  te::Schedule s({S, B});
  auto m = build_one(te::lower(s, {A, T, S, B}, "scalars"));
  Tensor a = random_tensor({5, 7}, 71), t = Tensor::scalar<float>(0.5f), sum(DType::f32, {}), b(DType::f32, {5, 7});
  run(*m, "scalars", {&a, &t, &sum, &b});
  double want_sum = 0;
  float want_min = INFINITY;
  for (int64_t i = 0; i < 35; ++i) {
    want_sum += a.data<float>()[i];
    want_min = std::min(want_min, a.data<float>()[i]);
  }
  EXPECT_NEAR(sum.data<float>()[0], want_sum, 1e-4);
  for (int64_t i = 0; i < 35; ++i)
    EXPECT_NEAR(b.data<float>()[i], a.data<float>()[i] - want_min + want_sum * 0.5, 1e-4) << i;
}

TEST(CodegenCSchedule, VectorizedReductionsUseAReductionClause) {
  // Row max and row sum with their reduce axes split and vectorized (tails included).
  Softmax sm(5, 75);
  te::Schedule s({sm.Y});
  for (const te::Tensor& t : {sm.M, sm.S}) {
    auto& st = s[t];
    auto [ko, ki] = st.split(st.reduce_axis(0), 16);
    st.vectorize(ki);
  }
  auto m = build_one(te::lower(s, {sm.X, sm.Y}, "softmax_vred"));
  EXPECT_NE(m->generated_c().find("#pragma omp simd reduction(max:"), std::string::npos) << m->generated_c();
  EXPECT_NE(m->generated_c().find("#pragma omp simd reduction(+:"), std::string::npos) << m->generated_c();
  Tensor x = random_tensor({5, 75}, 8, -4, 4), y(DType::f32, {5, 75});
  run(*m, "softmax_vred", {&x, &y});
  expect_close(y, softmax_ref(x), 1e-5);
}
