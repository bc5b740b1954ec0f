// Dense and matmul composites: bias, activation, bias/residual adds, rank-3 inputs, batched and
// broadcast matmul with runtime operands.
#include "ops/op.h"
#include "test_util.h"

namespace sy::onednn_test {
namespace {

TEST(OnednnDense, BiasAndActivation) {
  ir::Expr x = input("x", {4, 64});
  ir::Expr w = cst({32, 64}, 100, -0.2f, 0.2f);
  ir::Expr b = cst({32}, 101);
  ir::Expr y = composite("onednn.dense_act", {x, w, b}, [](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Tanh, {ir::call(OpCode::Dense, {p[0], p[1], p[2]})});
  });
  expect_matches_reference(region({x}, y), {random({4, 64}, 7)}, 1e-5);
}

TEST(OnednnDense, Rank3InputWithBiasAddGeluAndResidual) {
  ir::Expr x = input("x", {2, 5, 48});
  ir::Expr w = cst({48, 48}, 110, -0.2f, 0.2f);
  ir::Expr b = cst({48}, 111);
  ir::Expr h = composite("onednn.dense_add_act", {x, w, b}, [](const std::vector<ir::Expr>& p) {
    ir::Expr d = ir::call(OpCode::Dense, {p[0], p[1]});
    return ir::call(OpCode::Gelu, {ir::call(OpCode::Add, {d, p[2]})}, ops::GeluAttrs{});
  });
  ir::Expr w2 = cst({48, 48}, 112, -0.2f, 0.2f);
  ir::Expr y = composite("onednn.dense_add", {h, w2, x}, [](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Add, {ir::call(OpCode::Dense, {p[0], p[1]}), p[2]});  // residual
  });
  expect_matches_reference(region({x}, y), {random({2, 5, 48}, 8)}, 1e-5);
}

TEST(OnednnMatMul, ConstantWeightsWithBias) {
  ir::Expr x = input("x", {3, 7, 40});
  ir::Expr w = cst({40, 24}, 120, -0.2f, 0.2f);
  ir::Expr b = cst({24}, 121);
  ir::Expr y = composite("onednn.matmul_add_act", {x, w, b}, [](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Relu, {ir::call(OpCode::Add, {ir::call(OpCode::MatMul, {p[0], p[1]}), p[2]})});
  });
  expect_matches_reference(region({x}, y), {random({3, 7, 40}, 9)}, 1e-5);
}

TEST(OnednnMatMul, BatchedRuntimeOperandsWithBroadcast) {
  // attention-like: q [2, 4, 8, 16] x kT [2, 4, 16, 8]; then by v [4, 8, 16] broadcast over batch
  ir::Expr q = input("q", {2, 4, 8, 16});
  ir::Expr k = input("k", {2, 4, 16, 8});
  ir::Expr v = input("v", {4, 8, 16});
  ir::Expr s = ir::call(OpCode::MatMul, {q, k});
  ir::Expr y = ir::call(OpCode::MatMul, {s, v});
  expect_matches_reference(region({q, k, v}, y),
                           {random({2, 4, 8, 16}, 10), random({2, 4, 16, 8}, 11), random({4, 8, 16}, 12)}, 1e-5);
}

TEST(OnednnDense, AfterConvThroughGlobalPoolAndReshape) {
  // the classifier head of a CNN: blocked conv output -> pool -> reshape (needs plain) -> dense
  ir::Expr x = input("x", {1, 32, 7, 7});
  ir::Expr w = cst({64, 32, 1, 1}, 130, -0.2f, 0.2f);
  ir::Expr c = composite("onednn.conv2d_act", {x, w}, [](const std::vector<ir::Expr>& p) {
    ops::Conv2dAttrs a;
    return ir::call(OpCode::Relu, {ir::call(OpCode::Conv2d, {p[0], p[1]}, a)});
  });
  ir::Expr g = ir::call(OpCode::GlobalAvgPool2d, {c});
  ops::ReshapeAttrs ra;
  ra.newshape = {1, 64};
  ir::Expr r = ir::call(OpCode::Reshape, {g}, ra);
  ir::Expr dw = cst({10, 64}, 131, -0.2f, 0.2f);
  ir::Expr db = cst({10}, 132);
  ir::Expr y = composite("onednn.dense", {r, dw, db}, [](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Dense, {p[0], p[1], p[2]});
  });
  expect_matches_reference(region({x}, y), {random({1, 32, 7, 7}, 13)}, 1e-5);
}

}  // namespace
}  // namespace sy::onednn_test

namespace sy::onednn_test {
namespace {

TEST(OnednnMatMul, BroadcastForms) {
  struct Case {
    Shape a, b;
  };
  for (const Case& c : std::vector<Case>{{{6, 8}, {3, 8, 5}}, {{3, 6, 8}, {1, 8, 5}}, {{1, 6, 8}, {3, 8, 5}},
                                         {{2, 1, 6, 8}, {3, 8, 5}}, {{4, 6, 8}, {8, 5}}}) {
    SCOPED_TRACE(shape_str(c.a) + " x " + shape_str(c.b));
    ir::Expr a = input("a", c.a);
    ir::Expr b = input("b", c.b);
    expect_matches_reference(region({a, b}, ir::call(OpCode::MatMul, {a, b})), {random(c.a, 1), random(c.b, 2)}, 1e-5);
  }
}

}  // namespace
}  // namespace sy::onednn_test
