// topi transform computes (layout transforms, gathers, one_hot, cumsum and scatter extern stages)
// run as generated C and compared with the reference kernels.
#include <gtest/gtest.h>

#include <cmath>

#include "native_op_test_util.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "topi_test_data.h"

using namespace sy;
using namespace sy::testing;
using namespace sy::topitest;
using ops::OpCode;

namespace {

template <typename A>
ir::AttrsPtr attrs(A a) {
  return std::make_shared<A>(std::move(a));
}

ir::AttrsPtr axis_attrs(int64_t axis) {
  ops::AxisAttrs a;
  a.axis = axis;
  return attrs(a);
}

}  // namespace

TEST(TopiTransform, LayoutTransforms) {
  std::vector<NativeCase> cases;
  uint32_t seed = 1;
  auto reshape = [&](DType t, Shape from, std::vector<int64_t> to) {
    ops::ReshapeAttrs a;
    a.newshape = to;
    cases.push_back({OpCode::Reshape, attrs(a), {random(t, from, -50, 50, seed++)}});
  };
  reshape(DType::f32, {2, 3, 4}, {4, 6});
  reshape(DType::f32, {24}, {2, 3, 4});
  reshape(DType::i8, {1, 5}, {5});
  reshape(DType::f64, {}, {1, 1});
  reshape(DType::i64, {3, 1, 7}, {7, 3});
  auto transpose = [&](DType t, Shape s, std::vector<int64_t> perm) {
    ops::TransposeAttrs a;
    a.perm = perm;
    cases.push_back({OpCode::Transpose, attrs(a), {random(t, s, 0, 100, seed++)}});
  };
  transpose(DType::f32, {2, 3, 5}, {2, 0, 1});
  transpose(DType::f32, {4, 17}, {1, 0});
  transpose(DType::u8, {2, 3, 4, 5}, {0, 2, 3, 1});
  transpose(DType::boolean, {3, 5}, {1, 0});
  transpose(DType::i16, {2, 1, 3}, {0, 1, 2});
  for (DType t : kAllDTypes) {
    cases.push_back({OpCode::Concat, axis_attrs(1),
                     {random(t, {2, 3, 4}, 0, 9, seed++), random(t, {2, 1, 4}, 0, 9, seed++), random(t, {2, 5, 4}, 0, 9, seed++)}});
  }
  cases.push_back({OpCode::Concat, axis_attrs(0), {random(DType::f32, {3, 17}, 0, 9, seed++)}});
  cases.push_back({OpCode::Concat, axis_attrs(2), {random(DType::f32, {2, 2, 17}, 0, 9, seed++), random(DType::f32, {2, 2, 3}, 0, 9, seed++)}});
  auto slice = [&](DType t, Shape s, std::vector<int64_t> b, std::vector<int64_t> e, std::vector<int64_t> st) {
    ops::StridedSliceAttrs a;
    a.begin = b;
    a.end = e;
    a.strides = st;
    cases.push_back({OpCode::StridedSlice, attrs(a), {random(t, s, -50, 50, seed++)}});
  };
  slice(DType::f32, {10, 12}, {1, 11}, {9, -1}, {2, -3});
  slice(DType::f32, {4, 40}, {0, 3}, {4, 40}, {1, 1});
  slice(DType::i32, {5, 6, 7}, {4, 0, 6}, {-1, 6, 0}, {-1, 2, -2});
  auto broadcast = [&](DType t, Shape s, std::vector<int64_t> to) {
    ops::ShapeAttrs a;
    a.shape = to;
    cases.push_back({OpCode::BroadcastTo, attrs(a), {random(t, s, -50, 50, seed++)}});
  };
  broadcast(DType::f32, {3, 1}, {2, 3, 17});
  broadcast(DType::i64, {}, {4});
  broadcast(DType::u8, {2, 1, 3}, {4, 1});  // bidirectional: {2, 4, 3}
  auto tile = [&](DType t, Shape s, std::vector<int64_t> reps) {
    ops::RepsAttrs a;
    a.reps = reps;
    cases.push_back({OpCode::Tile, attrs(a), {random(t, s, -50, 50, seed++)}});
  };
  tile(DType::f32, {2, 3}, {2, 3});
  tile(DType::i8, {1, 5}, {3, 1});
  tile(DType::f64, {3}, {7});
  for (bool upper : {true, false}) {
    for (int64_t k : {-2, 0, 1, 3}) {
      ops::TriluAttrs a;
      a.upper = upper;
      a.k = k;
      cases.push_back({OpCode::Trilu, attrs(a), {random(DType::f32, {2, 4, 5}, -5, 5, seed++)}});
      cases.push_back({OpCode::Trilu, attrs(a), {random(DType::i32, {3, 17}, -5, 5, seed++)}});
    }
  }
  expect_native_cases_match_reference(cases);
}

TEST(TopiTransform, SplitHasSeveralOutputs) {
  std::vector<NativeCase> cases;
  ops::SplitAttrs a;
  a.axis = 0;
  a.sizes = {1, 2, 3};
  cases.push_back({OpCode::Split, attrs(a), {random(DType::f32, {6, 17}, -1, 1, 1)}});
  a.axis = 1;
  a.sizes = {16, 1};
  cases.push_back({OpCode::Split, attrs(a), {random(DType::i64, {3, 17}, -100, 100, 2)}});
  a.axis = 2;
  a.sizes = {2, 2};
  cases.push_back({OpCode::Split, attrs(a), {random(DType::boolean, {2, 3, 4}, 0, 1, 3)}});
  expect_native_cases_match_reference(cases);
}

TEST(TopiTransform, GathersAndOneHot) {
  std::vector<NativeCase> cases;
  uint32_t seed = 100;
  for (DType it : {DType::i32, DType::i64}) {
    // Negative indices count from the end.
    cases.push_back({OpCode::Gather, axis_attrs(1), {random(DType::f32, {5, 4, 3}, -9, 9, seed++), random(it, {2, 2}, -4, 3, seed++)}});
    cases.push_back({OpCode::Gather, axis_attrs(0), {random(DType::i8, {5, 17}, -9, 9, seed++), random(it, {}, -5, 4, seed++)}});
    cases.push_back({OpCode::Gather, axis_attrs(2), {random(DType::f64, {2, 3, 20}, -9, 9, seed++), random(it, {19}, -20, 19, seed++)}});
    cases.push_back({OpCode::GatherElements, axis_attrs(0), {random(DType::f32, {3, 4}, -9, 9, seed++), random(it, {2, 4}, -3, 2, seed++)}});
    cases.push_back({OpCode::GatherElements, axis_attrs(1), {random(DType::u8, {3, 4}, 0, 9, seed++), random(it, {3, 17}, -4, 3, seed++)}});
    ops::BatchDimsAttrs b;
    cases.push_back({OpCode::GatherND, attrs(b), {random(DType::f32, {2, 3, 4}, -9, 9, seed++), values(it, {2, 2}, {1, -1, 0, 2})}});
    cases.push_back({OpCode::GatherND, attrs(b), {random(DType::f32, {2, 3, 4}, -9, 9, seed++), values(it, {4, 3}, {1, 2, 3, 0, 0, 0, -1, -1, -1, 1, 0, 2})}});
    cases.push_back({OpCode::GatherND, attrs(b), {random(DType::i64, {4, 17}, -9, 9, seed++), values(it, {3, 1}, {3, 0, -2})}});
    b.batch_dims = 1;
    cases.push_back({OpCode::GatherND, attrs(b), {random(DType::f32, {2, 3, 4}, -9, 9, seed++), values(it, {2, 1, 2}, {1, 3, 2, -1})}});
    cases.push_back({OpCode::GatherND, attrs(b), {random(DType::f32, {2, 3, 4}, -9, 9, seed++), values(it, {2, 1}, {2, 0})}});
  }
  for (int64_t axis : {0, 1, 2}) {
    ops::OneHotAttrs a;
    a.depth = 5;
    a.axis = axis;
    // Negative indices count from the end; out of range gives all "off".
    cases.push_back({OpCode::OneHot, attrs(a), {values(DType::i64, {2, 3}, {0, 4, -1, 7, -6, 2}), values(DType::f32, {2}, {-1, 3})}});
    cases.push_back({OpCode::OneHot, attrs(a), {values(DType::f32, {2, 3}, {0.7, 4, -1.5, 3, 2, 1}), values(DType::i32, {2}, {0, 1})}});
  }
  ops::OneHotAttrs a;
  a.depth = 17;
  a.axis = 0;
  cases.push_back({OpCode::OneHot, attrs(a), {values(DType::i32, {}, {3}), values(DType::i64, {2}, {0, 1})}});
  expect_native_cases_match_reference(cases);
}

TEST(TopiTransform, CumsumAndScatterExternStages) {
  std::vector<NativeCase> cases;
  uint32_t seed = 200;
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      ops::CumSumAttrs c;
      c.exclusive = exclusive;
      c.reverse = reverse;
      c.axis = 1;
      cases.push_back({OpCode::CumSum, attrs(c), {random(DType::f32, {3, 17}, -1, 1, seed++)}});
      c.axis = 0;
      cases.push_back({OpCode::CumSum, attrs(c), {random(DType::i32, {5, 2, 3}, -100, 100, seed++)}});
      c.axis = 2;
      cases.push_back({OpCode::CumSum, attrs(c), {random(DType::f64, {2, 2, 9}, -1, 1, seed++)}});
    }
  }
  for (const char* red : {"none", "add", "mul", "max", "min"}) {
    for (DType it : {DType::i32, DType::i64}) {
      ops::ScatterAttrs s;
      s.reduction = red;
      s.axis = 0;
      // Duplicate indices: applied in index order, as the reference.
      cases.push_back({OpCode::ScatterElements, attrs(s),
                       {random(DType::f32, {3, 4}, -5, 5, seed++), values(it, {2, 4}, {0, -1, 2, 0, 0, 1, 2, 0}),
                        random(DType::f32, {2, 4}, -5, 5, seed++)}});
      s.axis = 1;
      cases.push_back({OpCode::ScatterElements, attrs(s),
                       {random(DType::i32, {3, 5}, -5, 5, seed++), values(it, {2, 3}, {4, 1, 1, -5, 0, 3}),
                        random(DType::i32, {2, 3}, -5, 5, seed++)}});
      s.axis = 0;
      cases.push_back({OpCode::ScatterND, attrs(s),
                       {random(DType::f32, {4, 5, 6}, -5, 5, seed++), values(it, {3, 1}, {0, 2, -1}),
                        random(DType::f32, {3, 5, 6}, -5, 5, seed++)}});
      cases.push_back({OpCode::ScatterND, attrs(s),
                       {random(DType::f64, {4, 5, 6}, -5, 5, seed++), values(it, {2, 3}, {0, 1, 2, 3, 4, 5}),
                        random(DType::f64, {2}, -5, 5, seed++)}});
      cases.push_back({OpCode::ScatterND, attrs(s),
                       {random(DType::i64, {4, 5, 6}, -5, 5, seed++), values(it, {2, 2}, {1, 1, 1, 1}),
                        random(DType::i64, {2, 6}, -5, 5, seed++)}});
    }
  }
  expect_native_cases_match_reference(cases);
}

// image.roi_align's extern stage against the reference: avg and max, both coordinate modes,
// adaptive and fixed sampling, f32 and f64, int32 and int64 batch indices, regions outside the
// image and reversed. A batch index out of range is an error on both.
TEST(TopiTransform, RoiAlignExternStage) {
  std::vector<NativeCase> cases;
  uint32_t seed = 300;
  const std::vector<double> boxes = {1, 2, 9, 7, -4, -3, 5, 4, 6.5, 1.25, 7, 1.5, 8, 8, 3, 2, 0, 0, 11, 10};
  for (const char* mode : {"avg", "max"})
    for (bool half_pixel : {false, true})
      for (int64_t ratio : {0, 2}) {
        ops::RoiAlignAttrs a;
        a.mode = mode;
        a.half_pixel = half_pixel;
        a.sampling_ratio = ratio;
        a.output_height = 3;
        a.output_width = 2;
        a.spatial_scale = 0.75;
        const DType t = ratio == 0 ? DType::f32 : DType::f64;
        const Tensor rois = values(t, {5, 4}, boxes);
        cases.push_back({OpCode::RoiAlign, attrs(a),
                         {random(t, {2, 3, 7, 8}, -2, 2, seed++), rois,
                          values(half_pixel ? DType::i32 : DType::i64, {5}, {0, 1, 1, 0, 1})}});
      }
  expect_native_cases_match_reference(cases);
  ops::RoiAlignAttrs a;
  const std::vector<Tensor> bad = {random(DType::f32, {2, 3, 7, 8}, -2, 2, seed++), random(DType::f32, {1, 4}, 0, 5, seed++),
                                   values(DType::i64, {1}, {2})};
  EXPECT_THROW(run_native_op(OpCode::RoiAlign, attrs(a), bad), Error);
  // NaN corners sample nothing; corners of 1e30 would sample for ever: an error.
  const std::vector<Tensor> nan_box = {random(DType::f32, {1, 2, 5, 5}, -2, 2, seed++),
                                       values(DType::f32, {1, 4}, {std::nan(""), 0, 2, 2}), values(DType::i64, {1}, {0})};
  const Tensor zeros = run_native_op(OpCode::RoiAlign, attrs(a), nan_box)[0];
  for (int64_t i = 0; i < zeros.numel(); ++i) EXPECT_EQ(zeros.data<float>()[i], 0.0f);
  EXPECT_THROW(run_native_op(OpCode::RoiAlign, attrs(a), {nan_box[0], values(DType::f32, {1, 4}, {0, 0, 1e30, 1e30}), nan_box[2]}),
               Error);
}

// det's extern stage against the reference: batches of matrices of sizes 1 to 7, one needing a row
// swap at every step, a singular one, f32 and f64.
TEST(TopiTransform, DetExternStage) {
  std::vector<NativeCase> cases;
  uint32_t seed = 340;
  for (int64_t m = 1; m <= 7; m += 2)
    for (DType t : {DType::f32, DType::f64}) cases.push_back({OpCode::Det, nullptr, {random(t, {2, 3, m, m}, -2, 2, seed++)}});
  cases.push_back({OpCode::Det, nullptr, {values(DType::f32, {3, 3}, {0, 2, 1, 0, 0, 3, 4, 1, 0})}});
  cases.push_back({OpCode::Det, nullptr, {values(DType::f64, {2, 2, 2}, {1, 2, 2, 4, 0, 1, 1, 0})}});
  expect_native_cases_match_reference(cases);
}

// image.max_roi_pool's extern stage against the reference: regions rounded to pixels, partly
// outside the image, below a pixel, reversed, bins larger and smaller than a pixel; f32 and f64.
// A batch index out of range is an error.
TEST(TopiTransform, MaxRoiPoolExternStage) {
  std::vector<NativeCase> cases;
  uint32_t seed = 320;
  const std::vector<double> boxes = {0, 1, 2, 9, 7, 1, -4, -3, 5, 4, 1, 6.5, 1.25, 7, 1.5, 0, 8, 8, 3, 2, 1, 0, 0, 15, 13};
  for (DType t : {DType::f32, DType::f64})
    for (std::vector<int64_t> pooled : {std::vector<int64_t>{3, 2}, std::vector<int64_t>{7, 9}}) {
      ops::MaxRoiPoolAttrs a;
      a.pooled_shape = pooled;
      a.spatial_scale = 0.75;
      cases.push_back({OpCode::MaxRoiPool, attrs(a), {random(t, {2, 3, 9, 10}, -2, 2, seed++), values(t, {5, 5}, boxes)}});
    }
  expect_native_cases_match_reference(cases);
  ops::MaxRoiPoolAttrs a;
  a.pooled_shape = {2, 2};
  EXPECT_THROW(run_native_op(OpCode::MaxRoiPool, attrs(a), {random(DType::f32, {2, 3, 7, 8}, -2, 2, seed++),
                                                           values(DType::f32, {1, 5}, {2, 0, 0, 3, 3})}),
               Error);
  for (double bad : {std::nan(""), 1e30})  // corners not finite or too large: an error
    EXPECT_THROW(run_native_op(OpCode::MaxRoiPool, attrs(a), {random(DType::f32, {2, 3, 7, 8}, -2, 2, seed++),
                                                             values(DType::f32, {1, 5}, {0, 0, 0, bad, 3})}),
                 Error);
}
