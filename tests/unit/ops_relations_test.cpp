// Unit tests of the op type relations: result shapes/dtypes and the wording of their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "ir/expr.h"
#include "ops/attrs.h"
#include "ops/op.h"

using namespace sy;
using namespace sy::ops;
using ::testing::HasSubstr;

namespace {

ir::Type T(Shape s, DType d = DType::f32) { return ir::tensor_type(std::move(s), d); }

ir::Type infer(OpCode code, std::vector<ir::Type> args, const ir::Attrs& attrs = NoAttrs{}) {
  return op_def(code).relation(args, attrs);
}

// The result must be a tensor of exactly this shape and dtype.
void expect_tensor(const ir::Type& t, const Shape& shape, DType dtype = DType::f32) {
  ASSERT_TRUE(ir::is_tensor(t)) << ir::type_str(t);
  EXPECT_EQ(t->shape, shape) << ir::type_str(t);
  EXPECT_EQ(t->dtype, dtype) << ir::type_str(t);
}

// Runs the relation and returns the sy::Error message ("" if it did not throw).
std::string error_of(OpCode code, std::vector<ir::Type> args, const ir::Attrs& attrs = NoAttrs{}) {
  try {
    infer(code, std::move(args), attrs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(OpsRelations, EveryOpHasARelation) {
  for (const auto& d : OpRegistry::global().all()) {
    EXPECT_TRUE(d.relation) << d.name;
    EXPECT_GE(d.min_args, 1) << d.name;
  }
}

// ---- elementwise ----

TEST(OpsRelations, UnaryKeepsTypeAndPredicatesReturnBool) {
  expect_tensor(infer(OpCode::Exp, {T({2, 3})}), {2, 3});
  expect_tensor(infer(OpCode::Neg, {T({4}, DType::i64)}), {4}, DType::i64);
  expect_tensor(infer(OpCode::IsNaN, {T({2})}), {2}, DType::boolean);
  expect_tensor(infer(OpCode::IsInf, {T({2})}, IsInfAttrs{}), {2}, DType::boolean);
  expect_tensor(infer(OpCode::LogicalNot, {T({2}, DType::boolean)}), {2}, DType::boolean);
  CastAttrs cast;
  cast.to = DType::i32;
  expect_tensor(infer(OpCode::Cast, {T({5})}, cast), {5}, DType::i32);
  EXPECT_THAT(error_of(OpCode::Exp, {T({2}, DType::i64)}), HasSubstr("exp: x must be float32 or float64, got int64"));
  EXPECT_THAT(error_of(OpCode::LogicalNot, {T({2})}), HasSubstr("logical_not: x must be bool, got float32"));
  ClipAttrs clip;
  clip.min = 2;
  clip.max = 1;
  EXPECT_THAT(error_of(OpCode::Clip, {T({2})}, clip), HasSubstr("clip: min=2 is greater than max=1"));
}

TEST(OpsRelations, BinaryBroadcastsAndChecksDtypes) {
  expect_tensor(infer(OpCode::Add, {T({8, 1, 6, 1}), T({7, 1, 5})}), {8, 7, 6, 5});
  expect_tensor(infer(OpCode::Mul, {T({}), T({3})}), {3});
  expect_tensor(infer(OpCode::Less, {T({2, 3}), T({3})}), {2, 3}, DType::boolean);
  expect_tensor(infer(OpCode::Equal, {T({2}, DType::boolean), T({2}, DType::boolean)}), {2}, DType::boolean);
  expect_tensor(infer(OpCode::Pow, {T({2, 3}), T({}, DType::i64)}), {2, 3});
  EXPECT_THAT(error_of(OpCode::Add, {T({2}), T({2}, DType::i64)}),
              HasSubstr("add: lhs has dtype float32 but rhs has dtype int64"));
  EXPECT_THAT(error_of(OpCode::Sub, {T({2, 3}), T({4})}),
              HasSubstr("subtract: cannot broadcast lhs of shape (2, 3) with rhs of shape (4,)"));
  EXPECT_THAT(error_of(OpCode::LogicalAnd, {T({2}), T({2})}), HasSubstr("logical_and: lhs must be bool"));
}

TEST(OpsRelations, WhereAndPRelu) {
  expect_tensor(infer(OpCode::Where, {T({3, 1}, DType::boolean), T({1, 4}), T({4})}), {3, 4});
  EXPECT_THAT(error_of(OpCode::Where, {T({3}), T({3}), T({3})}), HasSubstr("where: cond must be bool, got float32"));
  EXPECT_THAT(error_of(OpCode::Where, {T({3}, DType::boolean), T({3}), T({3}, DType::i32)}),
              HasSubstr("where: x has dtype float32 but y has dtype int32"));
  expect_tensor(infer(OpCode::PRelu, {T({1, 3, 4, 4}), T({3, 1, 1})}), {1, 3, 4, 4});
  EXPECT_THAT(error_of(OpCode::PRelu, {T({3}), T({2, 3})}), HasSubstr("does not broadcast to x of shape (3,)"));
}

TEST(OpsRelations, ArgumentCountIsCheckedByRelationAndBuilder) {
  EXPECT_THAT(error_of(OpCode::Add, {T({2})}), HasSubstr("add: expects 2 inputs, got 1"));
  auto x = ir::var("x", T({2}));
  try {
    ir::call(OpCode::Conv2d, {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("nn.conv2d: expects 2 to 3 inputs, got 1"));
  }
  EXPECT_THAT(error_of(OpCode::Relu, {ir::tuple_type({T({2})})}),
              HasSubstr("nn.relu: input 0 (x) must be a tensor, got (Tensor"));
}

// ---- nn ----

TEST(OpsRelations, Conv2dOutputSize) {
  Conv2dAttrs a;
  a.strides = {2, 2};
  a.padding = {3, 3, 3, 3};
  expect_tensor(infer(OpCode::Conv2d, {T({1, 3, 224, 224}), T({64, 3, 7, 7}), T({64})}, a), {1, 64, 112, 112});
  // Asymmetric padding, dilation and depthwise groups.
  Conv2dAttrs b;
  b.padding = {0, 1, 2, 0};
  b.dilation = {2, 1};
  b.groups = 8;
  expect_tensor(infer(OpCode::Conv2d, {T({2, 8, 10, 10}), T({16, 1, 3, 3})}, b), {2, 16, 8, 9});
}

TEST(OpsRelations, Conv2dErrors) {
  Conv2dAttrs a;
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}), T({64, 64, 3, 3})}, a),
              HasSubstr("nn.conv2d: weight has 64 input channels per group, data has 3 channels (groups=1)"));
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}, DType::i32), T({4, 3, 3, 3}, DType::i32)}, a),
              HasSubstr("nn.conv2d: data must be float32 or float64, got int32"));
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}), T({4, 3, 3, 3}, DType::f64)}, a),
              HasSubstr("nn.conv2d: weight has dtype float64 but data has dtype float32"));
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({3, 8, 8}), T({4, 3, 3, 3})}, a),
              HasSubstr("nn.conv2d: data (NCHW) must be 4-d, got shape (3, 8, 8)"));
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}), T({4, 3, 3, 3}), T({3})}, a),
              HasSubstr("nn.conv2d: bias must have shape (4,), got (3,)"));
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 2, 8}), T({4, 3, 3, 3})}, a),
              HasSubstr("nn.conv2d: dilated kernel height 3 exceeds padded input height 2"));
  Conv2dAttrs bad = a;
  bad.padding = {1, 1};
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}), T({4, 3, 3, 3})}, bad),
              HasSubstr("nn.conv2d: padding must have 4 entries, got [1, 1]"));
  Conv2dAttrs g = a;
  g.groups = 2;
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}), T({4, 1, 3, 3})}, g),
              HasSubstr("data has 3 channels, not divisible by groups=2"));
}

TEST(OpsRelations, ConvTranspose2d) {
  ConvTranspose2dAttrs a;
  a.strides = {2, 2};
  a.padding = {1, 1, 1, 1};
  a.output_padding = {1, 1};
  // 2*(5-1) + 1 + (3-1)+1 - 2 = 10
  expect_tensor(infer(OpCode::ConvTranspose2d, {T({1, 4, 5, 5}), T({4, 3, 3, 3}), T({3})}, a), {1, 3, 10, 10});
  ConvTranspose2dAttrs g;
  g.groups = 2;
  expect_tensor(infer(OpCode::ConvTranspose2d, {T({1, 4, 5, 5}), T({4, 3, 3, 3})}, g), {1, 6, 7, 7});
  ConvTranspose2dAttrs bad;
  bad.output_padding = {1, 0};
  EXPECT_THAT(error_of(OpCode::ConvTranspose2d, {T({1, 4, 5, 5}), T({4, 3, 3, 3})}, bad),
              HasSubstr("must be smaller than strides [1, 1] or dilation [1, 1]"));
}

TEST(OpsRelations, MatMulFollowsNumpy) {
  expect_tensor(infer(OpCode::MatMul, {T({2, 3}), T({3, 4})}), {2, 4});
  expect_tensor(infer(OpCode::MatMul, {T({3}), T({3})}), {});
  expect_tensor(infer(OpCode::MatMul, {T({3}), T({5, 3, 4})}), {5, 4});
  expect_tensor(infer(OpCode::MatMul, {T({5, 2, 3}), T({3})}), {5, 2});
  expect_tensor(infer(OpCode::MatMul, {T({2, 1, 4, 3}), T({6, 3, 5})}), {2, 6, 4, 5});
  EXPECT_THAT(error_of(OpCode::MatMul, {T({2, 3}), T({4, 5})}),
              HasSubstr("matmul: lhs of shape (2, 3) has 3 columns, rhs of shape (4, 5) has 4 rows"));
  EXPECT_THAT(error_of(OpCode::MatMul, {T({2, 2, 3}), T({3, 3, 4})}), HasSubstr("cannot broadcast lhs batch dims"));
}

TEST(OpsRelations, Dense) {
  expect_tensor(infer(OpCode::Dense, {T({2, 128, 768}), T({3072, 768}), T({3072})}), {2, 128, 3072});
  EXPECT_THAT(error_of(OpCode::Dense, {T({2, 5}), T({4, 6})}),
              HasSubstr("nn.dense: data of shape (2, 5) has 5 features, weight of shape (4, 6) expects 6"));
}

TEST(OpsRelations, Normalisations) {
  expect_tensor(infer(OpCode::BatchNorm, {T({1, 3, 4, 4}), T({3}), T({3}), T({3}), T({3})}, BatchNormAttrs{}),
                {1, 3, 4, 4});
  EXPECT_THAT(error_of(OpCode::BatchNorm, {T({1, 3, 4, 4}), T({3}), T({3}), T({4}), T({3})}, BatchNormAttrs{}),
              HasSubstr("nn.batch_norm: mean must have shape (3,), got (4,)"));
  LayerNormAttrs ln;
  ln.axis = 1;
  expect_tensor(infer(OpCode::LayerNorm, {T({2, 4, 8}), T({4, 8})}, ln), {2, 4, 8});
  expect_tensor(infer(OpCode::LayerNorm, {T({2, 4, 8}), T({4, 8}), T({4, 8})}, ln), {2, 4, 8});
  EXPECT_THAT(error_of(OpCode::LayerNorm, {T({2, 4, 8}), T({8})}, ln),
              HasSubstr("nn.layer_norm: scale must have shape (4, 8), got (8,)"));
  LayerNormAttrs neg;  // default -1 is not normalised
  EXPECT_THAT(error_of(OpCode::LayerNorm, {T({2, 8}), T({8})}, neg),
              HasSubstr("nn.layer_norm: axis=-1 out of range for rank 2"));
  expect_tensor(infer(OpCode::InstanceNorm, {T({1, 3, 5}), T({3}), T({3})}, EpsilonAttrs{}), {1, 3, 5});
  AxisAttrs ax;
  ax.axis = 2;
  EXPECT_THAT(error_of(OpCode::Softmax, {T({2, 3})}, ax), HasSubstr("nn.softmax: axis=2 out of range for rank 2"));
}

TEST(OpsRelations, PoolingFloorAndCeilMode) {
  Pool2dAttrs a;
  a.kernel = {3, 3};
  a.strides = {2, 2};
  a.padding = {1, 1, 1, 1};
  expect_tensor(infer(OpCode::MaxPool2d, {T({1, 64, 112, 112})}, a), {1, 64, 56, 56});
  // 5x5, k2 s2: floor 2, ceil 3.
  Pool2dAttrs c;
  c.kernel = {2, 2};
  c.strides = {2, 2};
  expect_tensor(infer(OpCode::AvgPool2d, {T({1, 1, 5, 5})}, c), {1, 1, 2, 2});
  c.ceil_mode = true;
  expect_tensor(infer(OpCode::AvgPool2d, {T({1, 1, 5, 5})}, c), {1, 1, 3, 3});
  // The ceil window that would start in the end padding is dropped: 6 + 1 + 1, k2 s2.
  Pool2dAttrs d = c;
  d.padding = {1, 1, 1, 1};
  expect_tensor(infer(OpCode::MaxPool2d, {T({1, 1, 6, 6})}, d), {1, 1, 4, 4});
  expect_tensor(infer(OpCode::GlobalAvgPool2d, {T({2, 7, 5, 5})}), {2, 7, 1, 1});
  Pool2dAttrs bad;
  bad.kernel = {3};
  EXPECT_THAT(error_of(OpCode::MaxPool2d, {T({1, 1, 5, 5})}, bad),
              HasSubstr("nn.max_pool2d: kernel must have 2 entries, got [3]"));
}

TEST(OpsRelations, PadSpaceDepthResize) {
  PadAttrs p;
  p.pads = {0, 1, 2, 3};
  expect_tensor(infer(OpCode::Pad, {T({4, 5})}, p), {6, 9});
  p.pads = {0, -2, 0, 0};
  expect_tensor(infer(OpCode::Pad, {T({4, 5})}, p), {4, 3});
  p.pads = {0, 1};
  EXPECT_THAT(error_of(OpCode::Pad, {T({4, 5})}, p), HasSubstr("nn.pad: pads must have 4 entries, got [0, 1]"));
  p.pads = {0, 5, 0, 0};
  p.mode = "reflect";
  EXPECT_THAT(error_of(OpCode::Pad, {T({4, 5})}, p), HasSubstr("reflect padding [0, 5, 0, 0] must be smaller than"));

  DepthToSpaceAttrs d2s;
  d2s.blocksize = 2;
  expect_tensor(infer(OpCode::DepthToSpace, {T({1, 8, 3, 3})}, d2s), {1, 2, 6, 6});
  BlockSizeAttrs s2d;
  s2d.blocksize = 2;
  expect_tensor(infer(OpCode::SpaceToDepth, {T({1, 2, 6, 6})}, s2d), {1, 8, 3, 3});
  EXPECT_THAT(error_of(OpCode::SpaceToDepth, {T({1, 2, 5, 6})}, s2d),
              HasSubstr("nn.space_to_depth: spatial size 5x6 is not divisible by blocksize=2"));

  Resize2dAttrs rz;
  rz.size = {20, 30};
  expect_tensor(infer(OpCode::Resize2d, {T({1, 3, 10, 10})}, rz), {1, 3, 20, 30});
  rz.coordinate_transformation_mode = "tf_crop_and_resize";
  EXPECT_THAT(error_of(OpCode::Resize2d, {T({1, 3, 10, 10})}, rz),
              HasSubstr("image.resize2d: coordinate_transformation_mode must be"));
}

// ---- transforms ----

TEST(OpsRelations, ReshapeTransposeConcatSplit) {
  ReshapeAttrs r;
  r.newshape = {6, 4};
  expect_tensor(infer(OpCode::Reshape, {T({2, 3, 4})}, r), {6, 4});
  r.newshape = {5, 5};
  EXPECT_THAT(error_of(OpCode::Reshape, {T({2, 3, 4})}, r),
              HasSubstr("reshape: newshape [5, 5] has 25 elements, data of shape (2, 3, 4) has 24"));

  TransposeAttrs t;
  t.perm = {2, 0, 1};
  expect_tensor(infer(OpCode::Transpose, {T({2, 3, 4})}, t), {4, 2, 3});
  t.perm = {0, 0, 1};
  EXPECT_THAT(error_of(OpCode::Transpose, {T({2, 3, 4})}, t),
              HasSubstr("transpose: perm [0, 0, 1] is not a permutation of 0..2"));

  AxisAttrs ax;
  ax.axis = 1;
  expect_tensor(infer(OpCode::Concat, {T({2, 3}), T({2, 5}), T({2, 1})}, ax), {2, 9});
  EXPECT_THAT(error_of(OpCode::Concat, {T({2, 3}), T({3, 5})}, ax),
              HasSubstr("concatenate: input 1 of shape (3, 5) does not match input 0 of shape (2, 3) except on axis 1"));

  SplitAttrs s;
  s.axis = 1;
  s.sizes = {2, 4};
  auto st = infer(OpCode::Split, {T({3, 6})}, s);
  ASSERT_EQ(st->kind, ir::TypeKind::Tuple);
  ASSERT_EQ(st->fields.size(), 2u);
  expect_tensor(st->fields[0], {3, 2});
  expect_tensor(st->fields[1], {3, 4});
  s.sizes = {2, 3};
  EXPECT_THAT(error_of(OpCode::Split, {T({3, 6})}, s),
              HasSubstr("split: sizes [2, 3] sum to 5, axis 1 of data has extent 6"));
}

TEST(OpsRelations, StridedSliceFollowsOnnxSlice) {
  StridedSliceAttrs a;
  a.begin = {1, 0, 9};
  a.end = {8, 10, -1};
  a.strides = {3, 1, -2};
  // ceil(7/3)=3, 10, ceil(10/2)=5
  expect_tensor(infer(OpCode::StridedSlice, {T({10, 10, 10})}, a), {3, 10, 5});
  a.begin = {5, 0, 0};
  a.end = {2, 10, 10};
  a.strides = {1, 1, 1};
  expect_tensor(infer(OpCode::StridedSlice, {T({10, 10, 10})}, a), {0, 10, 10});
  a.strides = {1, 0, 1};
  EXPECT_THAT(error_of(OpCode::StridedSlice, {T({10, 10, 10})}, a),
              HasSubstr("strided_slice: strides [1, 0, 1] has a zero step on axis 1"));
  a.strides = {1, 1};
  EXPECT_THAT(error_of(OpCode::StridedSlice, {T({10, 10, 10})}, a),
              HasSubstr("strided_slice: strides must have 3 entries, got [1, 1]"));
}

TEST(OpsRelations, Gathers) {
  AxisAttrs ax;
  ax.axis = 1;
  expect_tensor(infer(OpCode::Gather, {T({3, 4, 5}), T({2, 6}, DType::i64)}, ax), {3, 2, 6, 5});
  expect_tensor(infer(OpCode::Gather, {T({3, 4}), T({}, DType::i32)}, ax), {3});
  EXPECT_THAT(error_of(OpCode::Gather, {T({3, 4}), T({2})}, ax),
              HasSubstr("take: indices must be int32 or int64, got float32"));
  expect_tensor(infer(OpCode::GatherElements, {T({3, 4}), T({3, 2}, DType::i64)}, ax), {3, 2});

  BatchDimsAttrs bd;
  expect_tensor(infer(OpCode::GatherND, {T({2, 2}), T({2, 2}, DType::i64)}, bd), {2});
  expect_tensor(infer(OpCode::GatherND, {T({2, 2, 2}), T({2, 1}, DType::i64)}, bd), {2, 2, 2});
  bd.batch_dims = 1;
  expect_tensor(infer(OpCode::GatherND, {T({2, 2, 2}), T({2, 1}, DType::i64)}, bd), {2, 2});
  expect_tensor(infer(OpCode::GatherND, {T({2, 3, 4}), T({2, 5, 2}, DType::i64)}, bd), {2, 5});
  EXPECT_THAT(error_of(OpCode::GatherND, {T({2, 3}), T({2, 3}, DType::i64)}, bd),
              HasSubstr("gather_nd: indices last dim 3 must be in [1, 1]"));
}

TEST(OpsRelations, BroadcastTileTriluOneHotCumSum) {
  ShapeAttrs sh;
  sh.shape = {2, 1, 6};
  expect_tensor(infer(OpCode::BroadcastTo, {T({3, 1})}, sh), {2, 3, 6});
  sh.shape = {4};
  EXPECT_THAT(error_of(OpCode::BroadcastTo, {T({3})}, sh),
              HasSubstr("broadcast_to: cannot broadcast data of shape (3,) with target of shape (4,)"));
  RepsAttrs reps;
  reps.reps = {2, 3};
  expect_tensor(infer(OpCode::Tile, {T({2, 2})}, reps), {4, 6});
  EXPECT_THAT(error_of(OpCode::Trilu, {T({4})}, TriluAttrs{}), HasSubstr("trilu: data must have rank >= 2"));
  OneHotAttrs oh;
  oh.depth = 10;
  oh.axis = 1;
  expect_tensor(infer(OpCode::OneHot, {T({2, 3}, DType::i64), T({2})}, oh), {2, 10, 3});
  oh.axis = 3;
  EXPECT_THAT(error_of(OpCode::OneHot, {T({2, 3}, DType::i64), T({2})}, oh),
              HasSubstr("one_hot: axis=3 out of range for rank 3"));
  oh.axis = 0;
  EXPECT_THAT(error_of(OpCode::OneHot, {T({2, 3}, DType::i64), T({3})}, oh),
              HasSubstr("one_hot: values must have shape (2,) [off, on], got (3,)"));
  expect_tensor(infer(OpCode::CumSum, {T({2, 3})}, CumSumAttrs{}), {2, 3});
}

TEST(OpsRelations, Scatters) {
  ScatterAttrs a;
  a.axis = 1;
  expect_tensor(infer(OpCode::ScatterElements, {T({3, 3}), T({1, 2}, DType::i64), T({1, 2})}, a), {3, 3});
  EXPECT_THAT(error_of(OpCode::ScatterElements, {T({3, 3}), T({1, 2}, DType::i64), T({2, 2})}, a),
              HasSubstr("scatter_elements: updates of shape (2, 2) must have the shape of indices (1, 2)"));
  ScatterAttrs nd;
  expect_tensor(infer(OpCode::ScatterND, {T({4, 4, 4}), T({2, 1}, DType::i64), T({2, 4, 4})}, nd), {4, 4, 4});
  EXPECT_THAT(error_of(OpCode::ScatterND, {T({4, 4, 4}), T({2, 1}, DType::i64), T({2, 4})}, nd),
              HasSubstr("scatter_nd: updates must have shape (2, 4, 4)"));
  nd.reduction = "avg";
  EXPECT_THAT(error_of(OpCode::ScatterND, {T({4}), T({1, 1}, DType::i64), T({1})}, nd),
              HasSubstr("scatter_nd: reduction must be none, add, mul, max or min, got 'avg'"));
}

// ---- reductions ----

TEST(OpsRelations, Reductions) {
  ReduceAttrs r;
  r.axes = {1, 2};
  expect_tensor(infer(OpCode::ReduceMean, {T({2, 3, 4, 5})}, r), {2, 1, 1, 5});
  r.keepdims = false;
  expect_tensor(infer(OpCode::ReduceSum, {T({2, 3, 4, 5})}, r), {2, 5});
  r.axes = {};
  expect_tensor(infer(OpCode::ReduceMax, {T({2, 3})}, r), {2, 3});
  r.axes = {2, 1};
  EXPECT_THAT(error_of(OpCode::ReduceSum, {T({2, 3, 4})}, r), HasSubstr("sum: axes [2, 1] must be sorted and unique"));
  r.axes = {3};
  EXPECT_THAT(error_of(OpCode::ReduceSum, {T({2, 3, 4})}, r), HasSubstr("sum: axes [3] out of range for rank 3"));

  ArgReduceAttrs ar;
  ar.axis = 1;
  expect_tensor(infer(OpCode::ArgMax, {T({2, 3})}, ar), {2, 1}, DType::i64);
  ar.keepdims = false;
  expect_tensor(infer(OpCode::ArgMin, {T({2, 3})}, ar), {2}, DType::i64);

  TopKAttrs k;
  k.k = 2;
  k.axis = 1;
  auto t = infer(OpCode::TopK, {T({3, 5})}, k);
  ASSERT_EQ(t->kind, ir::TypeKind::Tuple);
  expect_tensor(t->fields[0], {3, 2});
  expect_tensor(t->fields[1], {3, 2}, DType::i64);
  k.k = 6;
  EXPECT_THAT(error_of(OpCode::TopK, {T({3, 5})}, k), HasSubstr("topk: k=6 must be in [0, 5] (extent of axis 1)"));
}

TEST(OpsRelations, ExtremeAttributeValuesAreErrorsNotOverflows) {
  ReshapeAttrs r;
  r.newshape = {INT64_MAX, 4};
  EXPECT_THAT(error_of(OpCode::Reshape, {T({2, 3})}, r), HasSubstr("reshape: size arithmetic overflows int64"));
  Conv2dAttrs c;
  c.padding = {INT64_MAX, 0, 1, 0};
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}), T({4, 3, 3, 3})}, c),
              HasSubstr("nn.conv2d: size arithmetic overflows int64"));
  StridedSliceAttrs s;
  s.begin = {9};
  s.end = {-1};
  s.strides = {INT64_MIN};
  expect_tensor(infer(OpCode::StridedSlice, {T({10})}, s), {1});
  s.strides = {INT64_MAX};
  s.begin = {0};
  s.end = {10};
  expect_tensor(infer(OpCode::StridedSlice, {T({10})}, s), {1});
}

TEST(OpsRelations, WrongAttrsStructIsAnError) {
  EXPECT_THAT(error_of(OpCode::Conv2d, {T({1, 3, 8, 8}), T({4, 3, 3, 3})}, Pool2dAttrs{}),
              HasSubstr("nn.conv2d: expects attributes Conv2dAttrs, got Pool2dAttrs"));
}
