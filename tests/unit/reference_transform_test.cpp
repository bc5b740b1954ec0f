// Reference kernels: layout transforms, slicing, padding, gathers, scatters and resizing.
#include <limits>

#include "ops/op.h"
#include "reference_test_util.h"

using namespace sy;
using namespace sy::reftest;
using ops::OpCode;

namespace {
ops::StridedSliceAttrs slice(std::vector<int64_t> b, std::vector<int64_t> e, std::vector<int64_t> s) {
  ops::StridedSliceAttrs a;
  a.begin = std::move(b);
  a.end = std::move(e);
  a.strides = std::move(s);
  return a;
}
ops::PadAttrs pad(std::vector<int64_t> pads, std::string mode, double value = 0) {
  ops::PadAttrs a;
  a.pads = std::move(pads);
  a.mode = std::move(mode);
  a.value = value;
  return a;
}
}  // namespace

TEST(ReferenceTransform, ReshapeTransposeConcatSplit) {
  Tensor x = iota_f32({2, 3});
  Tensor r = run(OpCode::Reshape, {x}, {3, 2});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  expect_near(r, {0, 1, 2, 3, 4, 5});
  ops::TransposeAttrs t;
  t.perm = {1, 0};
  expect_near(run(OpCode::Transpose, {x}, {3, 2}, DType::f32, t), {0, 3, 1, 4, 2, 5});
  t.perm = {2, 0, 1};
  expect_near(run(OpCode::Transpose, {iota_f32({2, 2, 2})}, {2, 2, 2}, DType::f32, t), {0, 2, 4, 6, 1, 3, 5, 7});
  ops::AxisAttrs ax;
  ax.axis = 1;
  expect_near(run(OpCode::Concat, {f32({2, 2}, {1, 2, 3, 4}), f32({2, 1}, {5, 6})}, {2, 3}, DType::f32, ax),
              {1, 2, 5, 3, 4, 6});
  ops::SplitAttrs sp;
  sp.axis = 1;
  sp.sizes = {1, 2};
  auto parts = run_tuple(OpCode::Split, {x}, {ir::tensor_type({2, 1}, DType::f32), ir::tensor_type({2, 2}, DType::f32)}, sp);
  ASSERT_EQ(parts.size(), 2u);
  expect_near(parts[0], {0, 3});
  expect_near(parts[1], {1, 2, 4, 5});
}

TEST(ReferenceTransform, StridedSliceWithNegativeSteps) {
  Tensor x = iota_f32({10});
  expect_near(run(OpCode::StridedSlice, {x}, {3}, DType::f32, slice({8}, {1}, {-3})), {8, 5, 2});
  expect_near(run(OpCode::StridedSlice, {x}, {10}, DType::f32, slice({9}, {-1}, {-1})), {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  expect_near(run(OpCode::StridedSlice, {x}, {3}, DType::f32, slice({1}, {8}, {3})), {1, 4, 7});
  Tensor m = iota_f32({3, 4});
  expect_near(run(OpCode::StridedSlice, {m}, {3, 2}, DType::f32, slice({2, 3}, {-1, -1}, {-1, -2})), {11, 9, 7, 5, 3, 1});
  expect_near(run(OpCode::StridedSlice, {m}, {0, 4}, DType::f32, slice({2, 0}, {2, 4}, {1, 1})), {});
}

TEST(ReferenceTransform, PadModes) {
  Tensor x = f32({3}, {1, 2, 3});
  expect_near(run(OpCode::Pad, {x}, {7}, DType::f32, pad({2, 2}, "constant", 0)), {0, 0, 1, 2, 3, 0, 0});
  expect_near(run(OpCode::Pad, {x}, {7}, DType::f32, pad({2, 2}, "reflect")), {3, 2, 1, 2, 3, 2, 1});
  expect_near(run(OpCode::Pad, {x}, {7}, DType::f32, pad({2, 2}, "edge")), {1, 1, 1, 2, 3, 3, 3});
  expect_near(run(OpCode::Pad, {x}, {7}, DType::f32, pad({2, 2}, "wrap")), {2, 3, 1, 2, 3, 1, 2});
  // Negative pads crop.
  expect_near(run(OpCode::Pad, {x}, {3}, DType::f32, pad({-1, 1}, "constant", 9)), {2, 3, 9});
  Tensor m = f32({2, 2}, {1, 2, 3, 4});
  expect_near(run(OpCode::Pad, {m}, {3, 4}, DType::f32, pad({1, 0, 0, 2}, "constant", -1)),
              {-1, -1, -1, -1, 1, 2, -1, -1, 3, 4, -1, -1});
  expect_near(run(OpCode::Pad, {m}, {4, 3}, DType::f32, pad({1, 1, 1, 0}, "reflect")), {4, 3, 4, 2, 1, 2, 4, 3, 4, 2, 1, 2});
  expect_near(run(OpCode::Pad, {i32({2}, {5, 6})}, {4}, DType::i32, pad({1, 1}, "constant", 7)), {7, 5, 6, 7});
  EXPECT_THROW(run(OpCode::Pad, {x}, {7}, DType::f32, pad({2, 2}, "mirror")), Error);
}

TEST(ReferenceTransform, BroadcastTileTrilu) {
  expect_near(run(OpCode::BroadcastTo, {f32({3}, {1, 2, 3})}, {2, 3}), {1, 2, 3, 1, 2, 3});
  expect_near(run(OpCode::BroadcastTo, {f32({2, 1}, {1, 2})}, {2, 3}), {1, 1, 1, 2, 2, 2});
  ops::RepsAttrs reps;
  reps.reps = {2};
  expect_near(run(OpCode::Tile, {f32({2}, {1, 2})}, {4}, DType::f32, reps), {1, 2, 1, 2});
  reps.reps = {2, 2};
  expect_near(run(OpCode::Tile, {f32({1, 2}, {1, 2})}, {2, 4}, DType::f32, reps), {1, 2, 1, 2, 1, 2, 1, 2});
  Tensor m = iota_f32({3, 3}, 1);
  ops::TriluAttrs tr;
  expect_near(run(OpCode::Trilu, {m}, {3, 3}, DType::f32, tr), {1, 2, 3, 0, 5, 6, 0, 0, 9});
  tr.upper = false;
  tr.k = -1;
  expect_near(run(OpCode::Trilu, {m}, {3, 3}, DType::f32, tr), {0, 0, 0, 4, 0, 0, 7, 8, 0});
  tr.k = 5;
  expect_near(run(OpCode::Trilu, {m}, {3, 3}, DType::f32, tr), {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST(ReferenceGather, TakeWithNegativeIndices) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  ops::AxisAttrs a;
  expect_near(run(OpCode::Gather, {data, i64({2}, {2, -3})}, {2, 2}, DType::f32, a), {5, 6, 1, 2});
  a.axis = 1;
  expect_near(run(OpCode::Gather, {data, i32({1, 1}, {1})}, {3, 1, 1}, DType::f32, a), {2, 4, 6});
  a.axis = 0;
  expect_near(run(OpCode::Gather, {data, Tensor::scalar<int64_t>(1)}, {2}, DType::f32, a), {3, 4});
  try {
    run(OpCode::Gather, {data, i64({1}, {3})}, {1, 2}, DType::f32, a);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "take: index 3 is out of range for an axis of size 3");
  }
}

TEST(ReferenceGather, GatherElementsAndND) {
  ops::AxisAttrs a;
  a.axis = 1;
  expect_near(run(OpCode::GatherElements, {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})}, {2, 2}, DType::f32, a),
              {1, 1, 4, 3});
  a.axis = 0;
  expect_near(run(OpCode::GatherElements, {iota_f32({3, 3}, 1), i64({2, 3}, {1, 2, 0, 2, 0, -1})}, {2, 3}, DType::f32, a),
              {4, 8, 3, 7, 2, 9});
  ops::BatchDimsAttrs nd;
  Tensor d = i32({2, 2}, {0, 1, 2, 3});
  expect_near(run(OpCode::GatherND, {d, i64({2, 2}, {0, 0, 1, 1})}, {2}, DType::i32, nd), {0, 3});
  expect_near(run(OpCode::GatherND, {d, i64({2, 1}, {1, 0})}, {2, 2}, DType::i32, nd), {2, 3, 0, 1});
  nd.batch_dims = 1;
  Tensor d3 = i32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_near(run(OpCode::GatherND, {d3, i64({2, 1}, {1, 0})}, {2, 2}, DType::i32, nd), {2, 3, 4, 5});
  EXPECT_THROW(run(OpCode::GatherND, {d3, i64({2, 1}, {2, 0})}, {2, 2}, DType::i32, nd), Error);
}

TEST(ReferenceGather, OneHot) {
  ops::OneHotAttrs a;
  a.depth = 3;
  a.axis = 1;
  Tensor idx = i64({3}, {0, -1, 5});
  Tensor vals = f32({2}, {0, 1});
  expect_near(run(OpCode::OneHot, {idx, vals}, {3, 3}, DType::f32, a), {1, 0, 0, 0, 0, 1, 0, 0, 0});
  a.axis = 0;
  expect_near(run(OpCode::OneHot, {idx, f32({2}, {2, 5})}, {3, 3}, DType::f32, a), {5, 2, 2, 2, 2, 2, 2, 5, 2});
}

TEST(ReferenceScatter, ElementsWithReductions) {
  ops::ScatterAttrs a;
  Tensor data(DType::f32, {3, 3});
  Tensor idx = i64({2, 3}, {1, 0, 2, 0, 2, 1});
  Tensor upd = f32({2, 3}, {1, 1.1f, 1.2f, 2, 2.1f, 2.2f});
  expect_near(run(OpCode::ScatterElements, {data, idx, upd}, {3, 3}, DType::f32, a), {2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2});
  a.axis = 1;
  a.reduction = "add";
  Tensor row = f32({1, 5}, {1, 2, 3, 4, 5});
  expect_near(run(OpCode::ScatterElements, {row, i64({1, 2}, {1, 1}), f32({1, 2}, {1.1f, 2.1f})}, {1, 5}, DType::f32, a),
              {1, 5.2, 3, 4, 5});
  a.reduction = "max";
  expect_near(run(OpCode::ScatterElements, {row, i64({1, 2}, {-1, 0}), f32({1, 2}, {9, -9})}, {1, 5}, DType::f32, a),
              {1, 2, 3, 4, 9});
  a.reduction = "bogus";
  EXPECT_THROW(run(OpCode::ScatterElements, {row, i64({1, 1}, {0}), f32({1, 1}, {0})}, {1, 5}, DType::f32, a), Error);
}

TEST(ReferenceScatter, ND) {
  ops::ScatterAttrs a;
  Tensor data = iota_f32({8}, 1);
  expect_near(run(OpCode::ScatterND, {data, i64({4, 1}, {4, 3, 1, 7}), f32({4}, {9, 10, 11, 12})}, {8}, DType::f32, a),
              {1, 11, 3, 10, 9, 6, 7, 12});
  a.reduction = "mul";
  Tensor m = iota_f32({2, 2}, 1);
  expect_near(run(OpCode::ScatterND, {m, i64({2, 1}, {1, 1}), f32({2, 2}, {2, 2, 3, 3})}, {2, 2}, DType::f32, a),
              {1, 2, 18, 24});
}

TEST(ReferenceImage, DepthToSpaceAndBack) {
  Tensor x = iota_f32({1, 8, 2, 3});
  ops::DepthToSpaceAttrs a;
  a.blocksize = 2;
  Tensor dcr = run(OpCode::DepthToSpace, {x}, {1, 2, 4, 6}, DType::f32, a);
  expect_near(dcr, {0,  12, 1,  13, 2,  14, 24, 36, 25, 37, 26, 38, 3,  15, 4,  16, 5,  17, 27, 39, 28, 40, 29, 41,
                    6,  18, 7,  19, 8,  20, 30, 42, 31, 43, 32, 44, 9,  21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47});
  a.mode = "CRD";
  expect_near(run(OpCode::DepthToSpace, {x}, {1, 2, 4, 6}, DType::f32, a),
              {0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10, 5,  11, 15, 21, 16, 22, 17, 23,
               24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47});
  ops::BlockSizeAttrs b;
  b.blocksize = 2;
  EXPECT_TRUE(run(OpCode::SpaceToDepth, {dcr}, {1, 8, 2, 3}, DType::f32, b).bitwise_equal(x));
}

TEST(ReferenceImage, ResizeMatchesOnnxReference) {
  // Expected values from onnx/backend/test/case/node/resize.py (interpolate_nd).
  ops::Resize2dAttrs a;
  Tensor x22 = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor x44 = iota_f32({1, 1, 4, 4});
  a.mode = "linear";
  a.size = {4, 4};
  expect_near(run(OpCode::Resize2d, {x22}, {1, 1, 4, 4}, DType::f32, a),
              {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  a.coordinate_transformation_mode = "pytorch_half_pixel";
  a.size = {3, 2};
  expect_near(run(OpCode::Resize2d, {x44}, {1, 1, 3, 2}, DType::f32, a),
              {1.1666666666666665, 3.1666666666666665, 6.5, 8.5, 11.833333333333334, 13.833333333333334});
  a.mode = "cubic";
  a.coordinate_transformation_mode = "align_corners";
  a.size = {3, 3};
  expect_near(run(OpCode::Resize2d, {x44}, {1, 1, 3, 3}, DType::f32, a), {0, 1.5, 3, 6, 7.5, 9, 12, 13.5, 15});
  a.coordinate_transformation_mode = "half_pixel";
  a.size = {3, 5};
  expect_near(run(OpCode::Resize2d, {x44}, {1, 1, 3, 5}, DType::f32, a),
              {0.4438796296296332, 1.1153796296296328, 2.0046296296296333, 2.89387962962963, 3.5653796296296383,
               5.939250000000005, 6.610750000000005, 7.5, 8.389249999999992, 9.060750000000008, 11.434620370370382,
               12.106120370370379, 12.995370370370368, 13.884620370370355, 14.556120370370381});
  a.mode = "nearest";
  a.size = {3, 3};
  expect_near(run(OpCode::Resize2d, {x44}, {1, 1, 3, 3}, DType::f32, a), {0, 1, 3, 4, 5, 7, 12, 13, 15});
  a.coordinate_transformation_mode = "asymmetric";
  a.nearest_mode = "round_prefer_ceil";
  expect_near(run(OpCode::Resize2d, {x22}, {1, 1, 3, 3}, DType::f32, a), {1, 2, 2, 3, 4, 4, 3, 4, 4});
  a.coordinate_transformation_mode = "tf_crop_and_resize";
  EXPECT_THROW(run(OpCode::Resize2d, {x22}, {1, 1, 3, 3}, DType::f32, a), Error);
}

// Regions whose coordinates come from the data: NaN corners sample nothing (RoiAlign gives 0);
// corners so far out that sampling would not end, or not finite for MaxRoiPool, are an error
// naming the region, not a hang or an undefined conversion.
TEST(ReferenceImage, RegionsOfNonFiniteOrHugeCoordinates) {
  const Tensor x = f32({1, 1, 4, 4}, std::vector<float>(16, 1.0f));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ops::RoiAlignAttrs ra;
  ra.output_height = ra.output_width = 2;
  for (int64_t ratio : {0, 2}) {
    ra.sampling_ratio = ratio;
    Tensor y = run(OpCode::RoiAlign, {x, f32({1, 4}, {nan, 0, 2, 2}), i64({1}, {0})}, {1, 1, 2, 2}, DType::f32, ra);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y.data<float>()[i], 0.0f) << "ratio " << ratio;
  }
  ra.sampling_ratio = 0;
  EXPECT_THROW(run(OpCode::RoiAlign, {x, f32({1, 4}, {0, 0, 1e30f, 1e30f}), i64({1}, {0})}, {1, 1, 2, 2}, DType::f32, ra),
               Error);
  ops::MaxRoiPoolAttrs mp;
  mp.pooled_shape = {2, 2};
  for (float bad : {nan, std::numeric_limits<float>::infinity(), 1e30f})
    EXPECT_THROW(run(OpCode::MaxRoiPool, {x, f32({1, 5}, {0, 0, 0, bad, 3})}, {1, 1, 2, 2}, DType::f32, mp), Error);
}

