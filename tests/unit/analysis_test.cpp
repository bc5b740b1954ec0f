// Model analysis: FLOP rules per op, parameter counting rules, histograms, output names.
#include <gtest/gtest.h>

#include "api/analysis.h"
#include "ops/attrs.h"
#include "ops/flops.h"
#include "ops/op.h"

using namespace sy;
using ops::OpCode;

namespace {

ir::Expr input(Shape s) { return ir::var("x", ir::tensor_type(std::move(s), DType::f32)); }
ir::Expr weight(Shape s) { return ir::constant(Tensor(DType::f32, std::move(s))); }

ir::Module module_of(const ir::Expr& param, const ir::Expr& body, std::vector<std::string> names = {}) {
  ir::Module m;
  m.functions["main"] = ir::function({param}, body);
  m.output_names = std::move(names);
  return m;
}

int64_t flops_of(const ir::Expr& e) { return ops::op_flops(*e->as<ir::CallNode>()); }

}  // namespace

TEST(Analysis, ConvFlopsCountTwoPerMultiplyAdd) {
  ops::Conv2dAttrs a;
  a.padding = {1, 1, 1, 1};
  ir::Expr conv = ir::call(OpCode::Conv2d, {input({1, 3, 8, 8}), weight({4, 3, 3, 3})}, a);
  EXPECT_EQ(flops_of(conv), 2 * 1 * 4 * 8 * 8 * 3 * 3 * 3);
  // Depthwise: Cin / groups = 1.
  ops::Conv2dAttrs dw;
  dw.groups = 6;
  dw.strides = {2, 2};
  ir::Expr d = ir::call(OpCode::Conv2d, {input({2, 6, 9, 9}), weight({6, 1, 3, 3})}, dw);
  EXPECT_EQ(flops_of(d), 2 * 2 * 6 * 4 * 4 * 1 * 3 * 3);
}

TEST(Analysis, MatmulAndDenseFlops) {
  ir::Expr a = input({2, 5, 3, 4});
  ir::Expr mm = ir::call(OpCode::MatMul, {a, weight({4, 7})});
  EXPECT_EQ(flops_of(mm), 2 * (2 * 5) * 3 * 7 * 4);
  ir::Expr dense = ir::call(OpCode::Dense, {input({3, 16}), weight({10, 16}), weight({10})});
  EXPECT_EQ(flops_of(dense), 2 * 3 * 10 * 16);
}

TEST(Analysis, ElementwiseReductionsAndDataMovement) {
  ir::Expr x = input({2, 3, 4});
  EXPECT_EQ(flops_of(ir::call(OpCode::Relu, {x})), 24);
  EXPECT_EQ(flops_of(ir::call(OpCode::Add, {x, weight({4})})), 24);
  ops::ReduceAttrs r;
  r.axes = {2};
  EXPECT_EQ(flops_of(ir::call(OpCode::ReduceSum, {x}, r)), 24);
  ops::ReshapeAttrs rs;
  rs.newshape = {6, 4};
  EXPECT_EQ(flops_of(ir::call(OpCode::Reshape, {x}, rs)), 0);
  ops::AxisAttrs sm;
  sm.axis = 2;
  EXPECT_EQ(flops_of(ir::call(OpCode::Softmax, {x}, sm)), 3 * 24);
  EXPECT_EQ(flops_of(ir::call(OpCode::Identity, {x})), 0);
  ops::Pool2dAttrs p;
  p.kernel = {2, 2};
  p.strides = {2, 2};
  EXPECT_EQ(flops_of(ir::call(OpCode::MaxPool2d, {input({1, 2, 4, 4})}, p)), 2 * 2 * 2 * 4);
  EXPECT_EQ(flops_of(ir::call(OpCode::GlobalAvgPool2d, {input({1, 2, 4, 4})})), 32);
}

// Weights count; BatchNorm running statistics, scalars and integer constants do not.
TEST(Analysis, ParameterCountingRules) {
  ir::Expr x = input({1, 4, 5, 5});
  ir::Expr conv = ir::call(OpCode::Conv2d, {x, weight({4, 4, 1, 1}), weight({4})}, ops::Conv2dAttrs{});
  ir::Expr bn = ir::call(OpCode::BatchNorm, {conv, weight({4}), weight({4}), weight({4}), weight({4})},
                         ops::BatchNormAttrs{});
  ir::Expr scaled = ir::call(OpCode::Mul, {bn, ir::constant(Tensor::scalar<float>(0.5f))});
  ir::Expr idx = ir::constant(Tensor::from_vector<int64_t>({2}, {0, 1}));
  ops::AxisAttrs axis1;
  axis1.axis = 1;
  ir::Expr taken = ir::call(OpCode::Gather, {scaled, idx}, axis1);
  api::ModelStats st = api::analyze(module_of(x, taken));
  EXPECT_EQ(st.params, 16 + 4 + 4 + 4);  // conv weight + bias, BN scale + shift
  EXPECT_EQ(st.param_bytes, 4 * st.params);
  EXPECT_EQ(st.num_ops, 4);
  EXPECT_EQ(st.op_histogram["nn.batch_norm"], 1);
  EXPECT_EQ(st.op_histogram["take"], 1);
  ASSERT_EQ(st.nodes.size(), 4u);
  EXPECT_EQ(st.nodes[0].op, "nn.conv2d");
  EXPECT_EQ(st.nodes[0].flops, 2 * 4 * 25 * 4);
  EXPECT_EQ(st.nodes[3].output_shape, (Shape{1, 2, 5, 5}));
  int64_t total = 0;
  for (const auto& n : st.nodes) total += n.flops;
  EXPECT_EQ(st.flops, total);
}

TEST(Analysis, SharedConstantsCountOnceAndFunctionBodiesPerCall) {
  ir::Expr w = weight({8, 8});
  ir::Expr p = ir::var("p", ir::tensor_type({1, 8}, DType::f32));
  ir::Expr fn = ir::function({p}, ir::call(OpCode::Dense, {p, w}));
  ir::Expr x = input({1, 8});
  ir::Expr body = ir::call_function(fn, {ir::call_function(fn, {x})});
  api::ModelStats st = api::analyze(module_of(x, body));
  EXPECT_EQ(st.params, 64);
  EXPECT_EQ(st.op_histogram["nn.dense"], 2);
  EXPECT_EQ(st.flops, 2 * (2 * 8 * 8));
}

TEST(Analysis, InputsOutputsAndNames) {
  ir::Expr x = input({2, 3});
  ir::Expr body = ir::tuple({ir::call(OpCode::Relu, {x}), ir::call(OpCode::Neg, {x})});
  api::ModelStats named = api::analyze(module_of(x, body, {"a/b", "c"}));
  ASSERT_EQ(named.inputs.size(), 1u);
  EXPECT_EQ(named.inputs[0].name, "x");
  ASSERT_EQ(named.outputs.size(), 2u);
  EXPECT_EQ(named.outputs[0].name, "a/b");
  // Without one name per output, outputs are numbered.
  api::ModelStats unnamed = api::analyze(module_of(x, body));
  EXPECT_EQ(unnamed.outputs[1].name, "output1");
  EXPECT_EQ(unnamed.outputs[1].shape, (Shape{2, 3}));
}
