// passes::simplify_arith: power(x, 2) becomes x * x (same values), other exponents stay; batch
// norm with constant statistics becomes (x - mean) * k + bias with the reference's values; an
// average pool of a zero-padded plane pads itself (reference and native values).
#include <gtest/gtest.h>

#include <cmath>

#include "backends/reference/executor.h"
#include "compiled_vs_reference.h"
#include "native/compile.h"
#include "ir/visitor.h"
#include "ir_count.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "passes/simplify_arith.h"

namespace sy {
namespace {

ir::Module pow_module(float exponent) {
  ir::Expr x = ir::var("x", ir::tensor_type({3, 4}, DType::f32));
  Tensor e = Tensor::uninitialized(DType::f32, {});
  e.data<float>()[0] = exponent;
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(ops::OpCode::Pow, {x, ir::constant(e)}));
  return m;
}

using irtest::count_op;

TEST(SimplifyArith, SquareBecomesMultiplyWithTheSameValues) {
  ir::Module m = pow_module(2.0f);
  ir::Module s = passes::simplify_arith(m);
  EXPECT_EQ(count_op(s, ops::OpCode::Pow), 0);
  EXPECT_EQ(count_op(s, ops::OpCode::Mul), 1);
  Tensor x = Tensor::uninitialized(DType::f32, {3, 4});
  for (int i = 0; i < 12; ++i) x.data<float>()[i] = -1.7f + 0.31f * static_cast<float>(i);
  auto a = reference::run_module(m, {x}, {});
  auto b = reference::run_module(s, {x}, {});
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  for (int i = 0; i < 12; ++i) EXPECT_EQ((*a)[0].data<float>()[i], (*b)[0].data<float>()[i]) << i;
}

TEST(SimplifyArith, OtherExponentsStay) {
  ir::Module s = passes::simplify_arith(pow_module(3.0f));
  EXPECT_EQ(count_op(s, ops::OpCode::Pow), 1);
  EXPECT_EQ(count_op(s, ops::OpCode::Mul), 0);
}

Tensor channel_values(std::vector<float> v) { return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v); }

TEST(SimplifyArith, BatchNormWithConstantStatisticsBecomesAffine) {
  ir::Expr x = ir::var("x", ir::tensor_type({2, 3, 4, 5}, DType::f32));
  ops::BatchNormAttrs a;
  a.epsilon = 1e-3;
  ir::Expr bn = ir::call(ops::OpCode::BatchNorm,
                         {x, ir::constant(channel_values({1.5f, -0.5f, 2.0f})), ir::constant(channel_values({0.1f, 0.2f, -0.3f})),
                          ir::constant(channel_values({0.4f, -1.0f, 0.0f})), ir::constant(channel_values({0.25f, 4.0f, 1.0f}))},
                         a);
  ir::Module m;
  m.functions["main"] = ir::function({x}, bn);
  ir::Module s = passes::simplify_arith(m);
  EXPECT_EQ(count_op(s, ops::OpCode::BatchNorm), 0);
  EXPECT_EQ(count_op(s, ops::OpCode::Mul), 1);
  Tensor xv = Tensor::uninitialized(DType::f32, {2, 3, 4, 5});
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  auto ra = reference::run_module(m, {xv}, {});
  auto rb = reference::run_module(s, {xv}, {});
  ASSERT_TRUE(ra.is_ok() && rb.is_ok());
  for (int64_t i = 0; i < xv.numel(); ++i)
    EXPECT_NEAR((*ra)[0].data<float>()[i], (*rb)[0].data<float>()[i], 1e-6f * (1.0f + std::abs((*ra)[0].data<float>()[i])))
        << i;
}

TEST(SimplifyArith, BatchNormWithRuntimeStatisticsStays) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 2, 3}, DType::f32));
  ir::Expr mean = ir::var("mean", ir::tensor_type({2}, DType::f32));
  ir::Expr c = ir::constant(channel_values({1.0f, 1.0f}));
  ir::Module m;
  m.functions["main"] = ir::function({x, mean}, ir::call(ops::OpCode::BatchNorm, {x, c, c, mean, c}, ops::BatchNormAttrs{}));
  EXPECT_EQ(count_op(passes::simplify_arith(m), ops::OpCode::BatchNorm), 1);
}

// Pad then pool, as exporters spell count_include_pad=True: one pool that counts its padding.
ir::Module padded_pool(std::vector<int64_t> pads, double value, bool ceil_mode, std::vector<int64_t> kernel = {3, 3},
                       std::vector<int64_t> strides = {1, 1}) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 5, 9, 8}, DType::f32));
  ops::PadAttrs p;
  p.pads = std::move(pads);
  p.value = value;
  ops::Pool2dAttrs a;
  a.kernel = std::move(kernel);
  a.strides = std::move(strides);
  a.ceil_mode = ceil_mode;
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(ops::OpCode::AvgPool2d, {ir::call(ops::OpCode::Pad, {x}, p)}, a));
  return m;
}

TEST(SimplifyArith, AnAveragePoolOfZeroPaddingPadsItself) {
  Tensor xv = Tensor::uninitialized(DType::f32, {1, 5, 9, 8});
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::cos(0.53f * static_cast<float>(i)) * 2.0f;
  struct Case {
    std::vector<int64_t> pads, kernel, strides;
  };
  for (const Case& c : {Case{{0, 0, 1, 1, 0, 0, 1, 1}, {3, 3}, {1, 1}},   // Inception's
                        Case{{0, 0, 2, 0, 0, 0, 1, 3}, {3, 2}, {2, 1}}}) {  // uneven, strided
    ir::Module m = padded_pool(c.pads, 0.0, false, c.kernel, c.strides);
    ir::Module s = passes::simplify_arith(m);
    EXPECT_EQ(count_op(s, ops::OpCode::Pad), 0);
    auto ra = reference::run_module(m, {xv}, {});
    auto rb = reference::run_module(s, {xv}, {});
    ASSERT_TRUE(ra.is_ok() && rb.is_ok());
    ASSERT_EQ((*ra)[0].shape(), (*rb)[0].shape());
    for (int64_t i = 0; i < (*ra)[0].numel(); ++i)
      EXPECT_NEAR((*ra)[0].data<float>()[i], (*rb)[0].data<float>()[i], 1e-6f) << i;
    for (const target::Target& t : nativetest::host_and_avx2_targets()) {
      native::CompileOptions o;
      o.target = t;
      native::Compiled nc = native::compile_native(m, o);
      nativetest::expect_reference_values(m, nc, {xv}, t.str());
    }
  }
  // Padding of another value, of the channels, or with ceil_mode: the pad stays.
  EXPECT_EQ(count_op(passes::simplify_arith(padded_pool({0, 0, 1, 1, 0, 0, 1, 1}, 1.0, false)), ops::OpCode::Pad), 1);
  EXPECT_EQ(count_op(passes::simplify_arith(padded_pool({0, 1, 1, 1, 0, 0, 1, 1}, 0.0, false)), ops::OpCode::Pad), 1);
  EXPECT_EQ(count_op(passes::simplify_arith(padded_pool({0, 0, 1, 1, 0, 0, 1, 1}, 0.0, true)), ops::OpCode::Pad), 1);
}

}  // namespace
}  // namespace sy
