// passes::simplify_arith: power(x, 2) becomes x * x (same values), other exponents stay.
#include <gtest/gtest.h>

#include "backends/reference/executor.h"
#include "ir/visitor.h"
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

int count_op(const ir::Module& m, ops::OpCode op) {
  int n = 0;
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c->op == op) ++n;
  return n;
}

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

}  // namespace
}  // namespace sy
