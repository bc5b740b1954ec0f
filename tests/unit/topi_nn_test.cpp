// nn op implementations of the native path (topi/nn_*.cpp) against the reference kernels: every
// op on several shapes (odd sizes: tails of every tile), groups/dilation/padding variants.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "ops/op.h"
#include "target/host.h"
#include "target/target.h"
#include "topi/nn_util.h"
#include "native_op_test_util.h"
#include "ops/attrs.h"

using namespace sy;
using namespace sy::testing;
using ops::OpCode;

namespace {

Tensor rnd(Shape s, uint32_t seed, DType t = DType::f32) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  Tensor x(t, std::move(s));
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (t == DType::f32) x.data<float>()[i] = static_cast<float>(d(rng));
    else x.data<double>()[i] = d(rng);
  }
  return x;
}

Tensor positive(Shape s, uint32_t seed) {
  Tensor x = rnd(std::move(s), seed);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 0.5f + std::abs(x.data<float>()[i]);
  return x;
}

template <typename A>
ir::AttrsPtr attrs(A a) {
  return std::make_shared<const A>(std::move(a));
}

ops::Conv2dAttrs conv(std::vector<int64_t> strides, std::vector<int64_t> padding, std::vector<int64_t> dilation = {1, 1},
                      int64_t groups = 1) {
  ops::Conv2dAttrs a;
  a.strides = strides;
  a.padding = padding;
  a.dilation = dilation;
  a.groups = groups;
  return a;
}

ops::Pool2dAttrs pool(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p, bool ceil = false,
                      bool include_pad = false, std::vector<int64_t> d = {1, 1}, int64_t pp = 2) {
  ops::Pool2dAttrs a;
  a.kernel = k;
  a.strides = s;
  a.padding = p;
  a.dilation = d;
  a.ceil_mode = ceil;
  a.count_include_pad = include_pad;
  a.p = pp;
  return a;
}

constexpr double kRtol = 1e-4, kAtol = 1e-5;

}  // namespace

TEST(TopiNnConv2d, BlockedLayoutShapesPaddingStridesDilation) {
  // groups == 1: the packed-weight blocked path; O not a multiple of 16, odd widths (tile tails).
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({2, 2}, {1, 1, 1, 1})),
                                  {rnd({1, 3, 9, 11}, 1), rnd({4, 3, 3, 3}, 2)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {1, 1, 1, 1})),
                                  {rnd({2, 16, 14, 14}, 3), rnd({32, 16, 3, 3}, 4)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 2}, {1, 0, 2, 1}, {2, 1})),
                                  {rnd({1, 5, 10, 13}, 5), rnd({20, 5, 3, 2}, 6), rnd({20}, 7)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {0, 0, 0, 0})),
                                  {rnd({1, 64, 7, 7}, 8), rnd({48, 64, 1, 1}, 9), rnd({48}, 10)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({2, 2}, {3, 3, 3, 3})),
                                  {rnd({1, 3, 23, 19}, 11), rnd({17, 3, 7, 7}, 12)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {1, 1, 1, 1})),
                                  {rnd({1, 8, 31, 30}, 13), rnd({16, 8, 3, 3}, 14)}, kRtol, kAtol);
}

TEST(TopiNnConv2d, ShortReductionWideRowsPath) {
  // C * KH * KW <= 48 and a wide output: vectors along the rows (tails of rows and channel tiles),
  // also with a width stride of 2 (MobileNet's stem).
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {1, 1, 1, 1})),
                                  {rnd({1, 3, 5, 50}, 15), rnd({10, 3, 3, 3}, 16), rnd({10}, 17)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {0, 0, 0, 0})),
                                  {rnd({2, 16, 3, 100}, 18), rnd({21, 16, 1, 1}, 19)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({2, 2}, {0, 1, 1, 0})),
                                  {rnd({1, 3, 9, 131}, 20), rnd({7, 3, 3, 3}, 21)}, kRtol, kAtol);
}

TEST(TopiNnConv2d, PointwiseFlatPlanePath) {
  // 1x1 unpadded stride-1 convs with few input channels: a GEMM over the flattened plane, with
  // tails of the pixel tiles (63 and 196 pixels), of the channel tiles, batch 2 and a bias.
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {0, 0, 0, 0})),
                                  {rnd({2, 40, 7, 9}, 40), rnd({22, 40, 1, 1}, 41), rnd({22}, 42)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {0, 0, 0, 0})),
                                  {rnd({1, 24, 14, 14}, 43), rnd({36, 24, 1, 1}, 44)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {0, 0, 0, 0})),
                                  {rnd({1, 5, 1, 3}, 45), rnd({4, 5, 1, 1}, 46)}, kRtol, kAtol);  // fewer pixels than a vector
}

TEST(TopiNnConv2d, GroupedDepthwiseAndF64) {
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {1, 1, 1, 1}, {1, 1}, 2)),
                                  {rnd({1, 8, 9, 9}, 21), rnd({6, 4, 3, 3}, 22), rnd({6}, 23)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {1, 1, 1, 1}, {1, 1}, 16)),
                                  {rnd({1, 16, 15, 37}, 24), rnd({16, 1, 3, 3}, 25), rnd({16}, 26)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({2, 2}, {0, 1, 1, 0}, {1, 1}, 12)),
                                  {rnd({2, 12, 14, 17}, 27), rnd({12, 1, 3, 3}, 28)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {2, 2, 2, 2}, {2, 2}, 6)),
                                  {rnd({1, 6, 11, 11}, 29), rnd({12, 1, 3, 3}, 30)}, kRtol, kAtol);  // multiplier 2
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {1, 1, 1, 1})),
                                  {rnd({1, 3, 6, 7}, 31, DType::f64), rnd({5, 3, 3, 3}, 32, DType::f64)}, 1e-10, 1e-12);
  // Groups of 16 output channels with a weight that is not a constant (conv2d.grouped_blocked
  // packs it in the kernel), batch 2.
  expect_native_matches_reference(OpCode::Conv2d, attrs(conv({1, 1}, {1, 1, 1, 1}, {1, 1}, 2)),
                                  {rnd({2, 32, 9, 10}, 33), rnd({32, 16, 3, 3}, 34), rnd({32}, 35)}, kRtol, kAtol);
}

TEST(TopiNnConv2d, Transpose) {
  auto ct = [](std::vector<int64_t> s, std::vector<int64_t> p, std::vector<int64_t> op, int64_t g,
               std::vector<int64_t> d = {1, 1}) {
    ops::ConvTranspose2dAttrs a;
    a.strides = s;
    a.padding = p;
    a.output_padding = op;
    a.groups = g;
    a.dilation = d;
    return attrs(a);
  };
  expect_native_matches_reference(OpCode::ConvTranspose2d, ct({2, 2}, {1, 1, 1, 1}, {1, 1}, 1),
                                  {rnd({1, 4, 5, 6}, 41), rnd({4, 3, 3, 3}, 42), rnd({3}, 43)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::ConvTranspose2d, ct({1, 3}, {0, 1, 2, 0}, {0, 2}, 2, {2, 1}),
                                  {rnd({2, 4, 4, 5}, 44), rnd({4, 2, 2, 3}, 45)}, kRtol, kAtol);
}

// Groups of rows of a conv in passes: a number the cores share evenly where a divisor of the rows
// allows (DenseNet's 3x3 conv to one channel tile on 14x14 ran 7 groups of 2 rows, 4:3 on two
// threads; 14 of one row run 7:7), otherwise the largest divisor that fits.
TEST(TopiNnConv2d, GroupsOfRowsAreSharedEvenlyByTheCores) {
  const target::Target two = target::parse("cpu -isa=avx512 -l2=2M -cores=2");
  const target::Target three = target::parse("cpu -isa=avx512 -l2=2M -cores=3");
  for (const auto& [rows, units, t] : std::vector<std::tuple<int64_t, int64_t, const target::Target*>>{
           {14, 1, &two}, {28, 1, &two}, {56, 1, &two}, {14, 8, &two}, {7, 1, &two}, {14, 1, &three}, {12, 1, &three}}) {
    const int64_t g = topi::nn::rows_per_group(rows, 1792, units, *t);
    ASSERT_EQ(rows % g, 0) << rows;
    const int64_t groups = units * (rows / g);
    EXPECT_GE(groups, 2 * t->cores) << rows << " rows, " << units << " units";
    const bool even_possible = rows % t->cores == 0 || units % t->cores == 0;
    if (even_possible) {
      EXPECT_EQ(groups % t->cores, 0) << rows << " rows, " << units << " units: " << g << " a group";
    }
  }
  EXPECT_EQ(topi::nn::balanced_divisor(14, 4, 1, 2), 1);  // 14 groups, not 7 of 2
  EXPECT_EQ(topi::nn::balanced_divisor(28, 4, 1, 2), 2);
  EXPECT_EQ(topi::nn::balanced_divisor(7, 3, 1, 2), 1);   // none even: the largest divisor
  EXPECT_EQ(topi::nn::balanced_divisor(14, 4, 2, 2), 2);  // 2 units x 7 groups share evenly
}

TEST(TopiNnDense, DenseAndMatmul) {
  expect_native_matches_reference(OpCode::Dense, nullptr, {rnd({5, 37}, 51), rnd({21, 37}, 52), rnd({21}, 53)}, kRtol,
                                  kAtol);
  expect_native_matches_reference(OpCode::Dense, nullptr, {rnd({2, 7, 40}, 54), rnd({33, 40}, 55)}, kRtol, kAtol);
  // 3-d data: the rows are flattened into one GEMM, whose row tiles cross the first axis.
  expect_native_matches_reference(OpCode::Dense, nullptr, {rnd({11, 1, 40}, 73), rnd({35, 40}, 74), rnd({35}, 75)},
                                  kRtol, kAtol);
  expect_native_matches_reference(OpCode::Dense, nullptr, {rnd({1, 13, 40}, 76), rnd({17, 40}, 77)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::Dense, nullptr, {rnd({13, 64}, 56), rnd({64, 64}, 57), rnd({64}, 58)}, kRtol,
                                  kAtol);
  expect_native_matches_reference(OpCode::Dense, nullptr, {rnd({9}, 59), rnd({3, 9}, 60)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::MatMul, nullptr, {rnd({19, 23}, 61), rnd({23, 45}, 62)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::MatMul, nullptr, {rnd({2, 1, 5, 7}, 63), rnd({3, 7, 4}, 64)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::MatMul, nullptr, {rnd({1, 3, 20, 16}, 65), rnd({1, 3, 16, 35}, 66)}, kRtol,
                                  kAtol);
  expect_native_matches_reference(OpCode::MatMul, nullptr, {rnd({7}, 67), rnd({7, 4}, 68)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::MatMul, nullptr, {rnd({3, 5, 7}, 69), rnd({7}, 70)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::MatMul, nullptr, {rnd({6, 5}, 71, DType::f64), rnd({5, 3}, 72, DType::f64)},
                                  1e-10, 1e-12);
}

TEST(TopiNnNorm, BatchLayerInstanceLrn) {
  ops::BatchNormAttrs bn;
  bn.epsilon = 1e-3;
  expect_native_matches_reference(OpCode::BatchNorm, attrs(bn),
                                  {rnd({2, 3, 5, 7}, 81), rnd({3}, 82), rnd({3}, 83), rnd({3}, 84), positive({3}, 85)},
                                  kRtol, kAtol);
  ops::LayerNormAttrs ln;
  ln.axis = 2;
  expect_native_matches_reference(OpCode::LayerNorm, attrs(ln), {rnd({2, 5, 37}, 86), rnd({37}, 87), rnd({37}, 88)},
                                  kRtol, kAtol);
  ln.axis = 1;
  expect_native_matches_reference(OpCode::LayerNorm, attrs(ln), {rnd({3, 4, 6}, 89), rnd({4, 6}, 90)}, kRtol, kAtol);
  ln.axis = 0;
  expect_native_matches_reference(OpCode::LayerNorm, attrs(ln), {rnd({4, 5}, 91), rnd({4, 5}, 92), rnd({4, 5}, 93)},
                                  kRtol, kAtol);
  ops::EpsilonAttrs eps;
  expect_native_matches_reference(OpCode::InstanceNorm, attrs(eps), {rnd({2, 3, 5, 6}, 94), rnd({3}, 95), rnd({3}, 96)},
                                  kRtol, kAtol);
  ops::LRNAttrs lr;
  lr.size = 3;
  lr.alpha = 1e-2;
  expect_native_matches_reference(OpCode::LRN, attrs(lr), {rnd({1, 7, 4, 5}, 97)}, kRtol, kAtol);
  lr.size = 4;
  lr.beta = 0.6;
  lr.bias = 2.0;
  expect_native_matches_reference(OpCode::LRN, attrs(lr), {rnd({2, 5, 3, 3}, 98)}, kRtol, kAtol);
}

TEST(TopiNnNorm, SoftmaxAndLogSoftmax) {
  for (OpCode op : {OpCode::Softmax, OpCode::LogSoftmax}) {
    ops::AxisAttrs a;
    a.axis = 2;
    expect_native_matches_reference(op, attrs(a), {rnd({2, 3, 37}, 101)}, kRtol, kAtol);
    a.axis = 1;
    expect_native_matches_reference(op, attrs(a), {rnd({2, 5, 4}, 102)}, kRtol, kAtol);
    a.axis = 0;
    expect_native_matches_reference(op, attrs(a), {rnd({9}, 103)}, kRtol, kAtol);
  }
}

TEST(TopiNnPool, MaxAvgLp) {
  for (OpCode op : {OpCode::MaxPool2d, OpCode::AvgPool2d, OpCode::LpPool2d}) {
    SCOPED_TRACE(ops::op_name(op));
    expect_native_matches_reference(op, attrs(pool({3, 3}, {2, 2}, {1, 1, 1, 1})), {rnd({1, 3, 11, 37}, 111)}, kRtol,
                                    kAtol);
    expect_native_matches_reference(op, attrs(pool({2, 3}, {2, 1}, {0, 1, 1, 0}, true)), {rnd({2, 2, 7, 9}, 112)}, kRtol,
                                    kAtol);
    expect_native_matches_reference(op, attrs(pool({3, 3}, {3, 3}, {1, 1, 1, 1}, true, true)),
                                    {rnd({1, 2, 10, 17}, 113)}, kRtol, kAtol);
    expect_native_matches_reference(op, attrs(pool({2, 2}, {1, 1}, {1, 0, 0, 1}, false, false, {2, 2})),
                                    {rnd({1, 3, 8, 20}, 114)}, kRtol, kAtol);
  }
  expect_native_matches_reference(OpCode::LpPool2d, attrs(pool({2, 2}, {2, 2}, {0, 0, 0, 0}, false, false, {1, 1}, 3)),
                                  {rnd({1, 2, 6, 6}, 115)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::LpPool2d, attrs(pool({2, 2}, {2, 2}, {0, 0, 0, 0}, false, false, {1, 1}, 1)),
                                  {rnd({1, 2, 6, 6}, 116)}, kRtol, kAtol);
}

TEST(TopiNnPool, Global) {
  expect_native_matches_reference(OpCode::GlobalAvgPool2d, nullptr, {rnd({2, 5, 7, 9}, 121)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::GlobalMaxPool2d, nullptr, {rnd({2, 5, 7, 9}, 122)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::GlobalAvgPool2d, nullptr, {rnd({1, 64, 7, 7}, 123)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::GlobalAvgPool2d, nullptr, {rnd({1, 48, 14, 14}, 124)}, kRtol, kAtol);
  expect_native_matches_reference(OpCode::GlobalMaxPool2d, nullptr, {rnd({1, 3, 17, 5}, 125)}, kRtol, kAtol);
}

TEST(TopiNnMisc, Pad) {
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    ops::PadAttrs a;
    a.mode = mode;
    a.value = 1.5;
    a.pads = {0, 1, 2, 3, 0, 2, 1, 4};
    expect_native_matches_reference(OpCode::Pad, attrs(a), {rnd({2, 3, 5, 6}, 131)}, kRtol, kAtol);
    a.pads = {1, -1, 2, 0};
    expect_native_matches_reference(OpCode::Pad, attrs(a), {rnd({3, 4}, 132)}, kRtol, kAtol);
  }
}

TEST(TopiNnMisc, DepthSpace) {
  for (const char* mode : {"DCR", "CRD"}) {
    ops::DepthToSpaceAttrs a;
    a.blocksize = 2;
    a.mode = mode;
    expect_native_matches_reference(OpCode::DepthToSpace, attrs(a), {rnd({2, 12, 3, 5}, 141)}, 0, 0);
  }
  ops::BlockSizeAttrs b;
  b.blocksize = 3;
  expect_native_matches_reference(OpCode::SpaceToDepth, attrs(b), {rnd({2, 2, 6, 9}, 142)}, 0, 0);
}

TEST(TopiNnMisc, Resize) {
  struct Case {
    const char* mode;
    const char* coord;
    const char* nearest;
    Shape size;
    double scale_h = 0, scale_w = 0;  // ONNX's given scales where they are not output/input
    bool exclude_outside = false;
  };
  for (const Case& c : std::vector<Case>{{"nearest", "half_pixel", "round_prefer_floor", {7, 11}},
                                          {"nearest", "asymmetric", "floor", {3, 4}},
                                          // Whole factors (integer indices), one axis kept.
                                          {"nearest", "asymmetric", "floor", {10, 18}},
                                          {"nearest", "asymmetric", "floor", {15, 6}},
                                          {"nearest", "half_pixel", "round_prefer_ceil", {9, 13}},
                                          {"nearest", "align_corners", "ceil", {8, 3}},
                                          {"linear", "half_pixel", "", {9, 14}},
                                          {"linear", "align_corners", "", {3, 5}},
                                          {"linear", "pytorch_half_pixel", "", {1, 12}},
                                          {"cubic", "half_pixel", "", {10, 7}},
                                          {"cubic", "asymmetric", "", {4, 9}},
                                          // interpolate(scale_factor=...) of sizes it does not divide.
                                          {"linear", "half_pixel", "", {2, 13}, 0.5, 2.3},
                                          {"nearest", "asymmetric", "floor", {10, 9}, 2.1, 1.5},
                                          {"cubic", "pytorch_half_pixel", "", {7, 4}, 1.4, 0.7},
                                          // TensorFlow's half-pixel nearest (tf2onnx).
                                          {"nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", {3, 10}},
                                          {"linear", "tf_half_pixel_for_nn", "", {9, 4}},
                                          // TensorFlow's bicubic/bilinear: taps outside weigh 0.
                                          {"cubic", "half_pixel", "", {10, 7}, 0, 0, true},
                                          {"cubic", "asymmetric", "", {3, 4}, 0, 0, true},
                                          {"linear", "tf_half_pixel_for_nn", "", {9, 4}, 0, 0, true},
                                          {"cubic", "pytorch_half_pixel", "", {7, 4}, 1.4, 0.7, true}}) {
    SCOPED_TRACE(std::string(c.mode) + " " + c.coord);
    ops::Resize2dAttrs a;
    a.mode = c.mode;
    a.coordinate_transformation_mode = c.coord;
    if (*c.nearest) a.nearest_mode = c.nearest;
    a.size = {c.size[0], c.size[1]};
    a.scale_h = c.scale_h;
    a.scale_w = c.scale_w;
    a.exclude_outside = c.exclude_outside;
    expect_native_matches_reference(OpCode::Resize2d, attrs(a), {rnd({1, 2, 5, 6}, 151)}, kRtol, kAtol);
  }
}

#include "compiled_vs_reference.h"

TEST(TopiNnMisc, NearestUpsamplingByAWholeFactorInlinesIntoItsConsumer) {
  // YOLO's neck: SiLU, a 2x nearest upsampling (as PyTorch exports it), a concatenation. The
  // indices are integer: no f64 floor, and the resized map is not computed whole first.
  ops::Resize2dAttrs a;
  a.mode = "nearest";
  a.coordinate_transformation_mode = "asymmetric";
  a.nearest_mode = "floor";
  a.size = {16, 16};
  ir::Expr x = ir::var("x", ir::tensor_type({1, 8, 8, 8}, DType::f32));
  ir::Expr y = ir::var("y", ir::tensor_type({1, 8, 16, 16}, DType::f32));
  ir::Expr silu = ir::call(OpCode::Mul, {x, ir::call(OpCode::Sigmoid, {x})});
  ops::AxisAttrs c;
  c.axis = 1;
  ir::Module m;
  m.functions["main"] = ir::function({x, y}, ir::call(OpCode::Concat, {ir::call(OpCode::Resize2d, {silu}, attrs(a)), y}, attrs(c)));
  native::Compiled nc = native::compile_native(m, native::CompileOptions{});
  EXPECT_EQ(nc.generated_c.find("floor("), std::string::npos);
  EXPECT_EQ(nc.generated_c.find("*)sy_alloc("), std::string::npos);  // no buffer of its own
  nativetest::expect_reference_values(m, nc, {rnd({1, 8, 8, 8}, 161), rnd({1, 8, 16, 16}, 162)}, "upsampling and concatenation");
}

// ---- fused groups and pre-packed weights ----

#include "backends/reference/executor.h"
#include "passes/fuse_ops.h"
#include "native/lower_function.h"
#include "tir/functor.h"
#include "tir/printer.h"
#include "strategy/strategy.h"
#include "topi/topi.h"

namespace {

// Runs @main of a module whose body is one call of a primitive function natively (its arguments:
// main's parameters, bound to inputs, or constants) and compares with the reference on `ref`.
void expect_fused_matches(const ir::Module& fused, const ir::Module& ref, const std::vector<Tensor>& inputs) {
  const ir::FunctionNode& main = fused.main();
  auto* call = main.body->as<ir::CallNode>();
  ASSERT_TRUE(call && call->callee && call->callee->as<ir::FunctionNode>()) << "not one fused group";
  std::vector<Tensor> args;
  for (const ir::Expr& a : call->args) {
    if (auto* k = a->as<ir::ConstantNode>()) {
      args.push_back(k->value);
      continue;
    }
    auto it = std::find(main.params.begin(), main.params.end(), a);
    ASSERT_NE(it, main.params.end());
    args.push_back(inputs[static_cast<size_t>(it - main.params.begin())]);
  }
  std::vector<Tensor> got = run_native_function(call->callee, args);
  std::vector<Tensor> want = reference::run_module(ref, inputs).value();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  int bad = 0;
  for (int64_t i = 0; i < want[0].numel() && bad < 5; ++i) {
    const double g = got[0].data<float>()[i], w = want[0].data<float>()[i];
    if (!(std::abs(g - w) <= kAtol + kRtol * std::abs(w))) {
      ++bad;
      ADD_FAILURE() << "element " << i << ": native " << g << ", reference " << w;
    }
  }
}

ir::Module conv_block(Shape xs, Shape ws, ops::Conv2dAttrs a, bool residual, bool clip) {
  ir::Expr x = ir::var("x", ir::tensor_type(xs, DType::f32));
  ir::Expr y = ir::call(OpCode::Conv2d, {x, ir::constant(rnd(ws, 201)), ir::constant(rnd({ws[0]}, 202))}, a);
  std::vector<ir::Expr> params{x};
  if (residual) {
    ir::Expr r = ir::var("r", ir::tensor_type(ir::shape_of(y), DType::f32));
    params.push_back(r);
    y = ir::call(OpCode::Add, {y, r});
  }
  if (clip) {
    ops::ClipAttrs c;
    c.min = 0.0;
    c.max = 6.0;
    y = ir::call(OpCode::Clip, {y}, c);
  } else {
    y = ir::call(OpCode::Relu, {y});
  }
  ir::Module m;
  m.functions["main"] = ir::function(params, y);
  return m;
}

}  // namespace

TEST(TopiNnFused, ConvBiasAddReluOneKernelPlainAndPrepacked) {
  struct Case {
    Shape xs, ws;
    ops::Conv2dAttrs a;
    bool residual, clip;
  };
  for (const Case& c : std::vector<Case>{{{1, 16, 14, 14}, {32, 16, 3, 3}, conv({1, 1}, {1, 1, 1, 1}), true, false},
                                         {{1, 24, 9, 13}, {40, 24, 1, 1}, conv({1, 1}, {0, 0, 0, 0}), true, true},
                                         {{1, 8, 17, 15}, {20, 8, 3, 3}, conv({2, 2}, {1, 1, 1, 1}), false, false},
                                         {{1, 12, 10, 10}, {12, 1, 3, 3}, conv({1, 1}, {1, 1, 1, 1}, {1, 1}, 12), false, true},
                                         {{1, 16, 4, 56}, {24, 16, 1, 1}, conv({1, 1}, {0, 0, 0, 0}), true, true}}) {
    ir::Module m = conv_block(c.xs, c.ws, c.a, c.residual, c.clip);
    std::vector<Tensor> inputs{rnd(c.xs, 203)};
    if (c.residual) inputs.push_back(rnd(ir::shape_of(m.main().body), 204));
    ir::Module fused = passes::fuse_ops(m);
    expect_fused_matches(fused, m, inputs);
    int packed = -1;
    ir::Module pre = topi::prepack_constants(fused, target::host(), &packed);
    EXPECT_EQ(packed, c.a.groups == 1 ? 1 : 0);
    expect_fused_matches(pre, m, inputs);
  }
}

TEST(TopiNnFused, DenseBiasReluPrepacked) {
  ir::Expr x = ir::var("x", ir::tensor_type({2, 9, 50}, DType::f32));
  ir::Expr y = ir::call(OpCode::Dense, {x, ir::constant(rnd({37, 50}, 211)), ir::constant(rnd({37}, 212))});
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(OpCode::Relu, {y}));
  std::vector<Tensor> inputs{rnd({2, 9, 50}, 213)};
  ir::Module fused = passes::fuse_ops(m);
  expect_fused_matches(fused, m, inputs);
  int packed = 0;
  ir::Module pre = topi::prepack_constants(fused, target::host(), &packed);
  EXPECT_EQ(packed, 1);
  const Tensor& pw = pre.main().body->as<ir::CallNode>()->args[1]->as<ir::ConstantNode>()->value;
  const int64_t block = topi::weight_block(target::host());  // one vector: 16 lanes, 8 with -isa=avx2
  EXPECT_EQ(pw.shape(), (Shape{(37 + block - 1) / block, 50, block}));
  expect_fused_matches(pre, m, inputs);
}

TEST(TopiNnFused, MatmulWithConstantRhsBecomesPackedDense) {
  for (Shape xs : {Shape{1, 9, 50}, Shape{50}}) {
    ir::Expr x = ir::var("x", ir::tensor_type(xs, DType::f32));
    ir::Expr y = ir::call(OpCode::MatMul, {x, ir::constant(rnd({50, 37}, 221))});
    y = ir::call(OpCode::Add, {y, ir::constant(rnd({37}, 222))});
    ir::Module m;
    m.functions["main"] = ir::function({x}, ir::call(OpCode::Relu, {y}));
    std::vector<Tensor> inputs{rnd(xs, 223)};
    ir::Module fused = passes::fuse_ops(m);
    int packed = 0;
    ir::Module pre = topi::prepack_constants(fused, target::host(), &packed);
    EXPECT_EQ(packed, 1);
    expect_fused_matches(pre, m, inputs);
  }
}

namespace {

// How many times the kernel evaluates calls of `fn`: for each call in a stored value, the product
// of the extents of the loops around it (vector loops count their lanes).
int64_t call_evaluations(const tir::Stmt& s, const std::string& fn, int64_t times = 1) {
  if (!s) return 0;
  switch (s->kind) {
    case tir::StmtKind::For:
      return call_evaluations(s->body, fn, times * (s->extent->is_const() ? s->extent->int_value : 1));
    case tir::StmtKind::Seq: {
      int64_t n = 0;
      for (const tir::Stmt& c : s->seq) n += call_evaluations(c, fn, times);
      return n;
    }
    case tir::StmtKind::IfThenElse:
      return call_evaluations(s->body, fn, times) + call_evaluations(s->else_body, fn, times);
    case tir::StmtKind::LetStmt:
    case tir::StmtKind::Store: {
      int64_t calls = 0;
      tir::visit_expr(s->value, [&](const tir::Expr& e) { calls += e->kind == tir::ExprKind::Call && e->name == fn; });
      return calls * times + call_evaluations(s->body, fn, times);
    }
    case tir::StmtKind::Allocate: return call_evaluations(s->body, fn, times);
    case tir::StmtKind::ExternCall: return 0;
  }
  return 0;
}

}  // namespace

// A squeeze-excitation: a 1x1 conv on the squeezed 1x1 plane, its sigmoid, and the multiply that
// scales a whole feature map by it, fused into one kernel. The sigmoid is evaluated once per
// channel, not once per element of the map it scales (EfficientNet-B0 evaluated 401,408 exps for
// 32 values), and the values are the reference's.
TEST(TopiNnFused, ExcitationSigmoidOncePerChannel) {
  const Shape ss{1, 8, 1, 1}, fs{1, 32, 23, 29};
  ir::Expr sq = ir::var("s", ir::tensor_type(ss, DType::f32));
  ir::Expr f = ir::var("f", ir::tensor_type(fs, DType::f32));
  ir::Expr y = ir::call(OpCode::Conv2d, {sq, ir::constant(rnd({32, 8, 1, 1}, 231)), ir::constant(rnd({32}, 232))},
                        conv({1, 1}, {0, 0, 0, 0}));
  y = ir::call(OpCode::Mul, {ir::call(OpCode::Sigmoid, {y}), f});
  ir::Module m;
  m.functions["main"] = ir::function({sq, f}, y);
  std::vector<Tensor> inputs{rnd(ss, 233), rnd(fs, 234)};
  ir::Module fused = passes::fuse_ops(m);
  expect_fused_matches(fused, m, inputs);
  auto* group = fused.main().body->as<ir::CallNode>();
  ASSERT_TRUE(group && group->callee);
  tir::PrimFunc k = native::lower_function(*group->callee->as<ir::FunctionNode>(), "excitation");
  const int64_t exps = call_evaluations(k.body, "exp");
  // Without the root stage: 2 x 32 x 23 x 29.
  EXPECT_GE(exps, 32);
  EXPECT_LE(exps, 2 * 32) << tir::print_func(k);  // the formula names its exp twice (one call in C)
}

// A dense whose rows are not a whole number of register tiles (21 rows in tiles of 6; two whole
// panels of columns, fused with the row tiles into one parallel loop), with a
// sigmoid after it: the last tile's row guard does not stay inside the epilogue's vector loop,
// where GCC left it scalar (one exp at a time: the dense ran 3.5x slower with its sigmoid).
TEST(TopiNnFused, DenseEpilogueRowGuardLeavesTheVectorLoop) {
  ir::Expr x = ir::var("x", ir::tensor_type({3, 7, 50}, DType::f32));
  ir::Expr y = ir::call(OpCode::Dense, {x, ir::constant(rnd({64, 50}, 241)), ir::constant(rnd({64}, 242))});
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(OpCode::Sigmoid, {y}));
  std::vector<Tensor> inputs{rnd({3, 7, 50}, 243)};
  ir::Module fused = passes::fuse_ops(m);
  expect_fused_matches(fused, m, inputs);
  auto* group = fused.main().body->as<ir::CallNode>();
  ASSERT_TRUE(group && group->callee);
  tir::PrimFunc k = native::lower_function(*group->callee->as<ir::FunctionNode>(), "dense_sigmoid");
  int vector_loops = 0;
  tir::visit_stmt(k.body, [&](const tir::Stmt& s) {
    if (s->kind != tir::StmtKind::For || s->for_kind != tir::ForKind::Vectorized) return;
    ++vector_loops;
    if (s->body->kind == tir::StmtKind::IfThenElse) {
      EXPECT_TRUE(tir::uses_var(s->body->cond, s->var)) << tir::print_func(k);
    }
  });
  EXPECT_GT(vector_loops, 0);
}

// A global pool sums each channel's plane as one run of the vector loop (partial sums in lanes):
// over H then W it was 196 dependent scalar adds per channel of a 14x14 plane.
TEST(TopiNnPool, GlobalPoolVectorizesThePlane) {
  for (OpCode op : {OpCode::GlobalAvgPool2d, OpCode::GlobalMaxPool2d}) {
    ir::Expr x = ir::var("x", ir::tensor_type({1, 48, 14, 14}, DType::f32));
    ir::Expr fn = ir::function({x}, ir::call(op, {x}), {{"Primitive", "1"}});
    tir::PrimFunc k = native::lower_function(*fn->as<ir::FunctionNode>(), "pool");
    bool plane_vectorized = false;
    tir::visit_stmt(k.body, [&](const tir::Stmt& s) {
      plane_vectorized |= s->kind == tir::StmtKind::For && s->for_kind == tir::ForKind::Vectorized &&
                          s->extent->is_const() && s->extent->int_value == 14 * 14;
    });
    EXPECT_TRUE(plane_vectorized) << tir::print_func(k);
  }
}

// Max and average pools have two implementations, pool2d.plane over the flattened padded plane
// (the default wherever it applies: row by row with guards, GoogLeNet's 3x3 pools ran at 2-4
// GFLOP/s) and pool2d.rows. Each gives the reference's values: counts with and without the
// padding, ceil mode's overhang, strides over wide rows (the plane's copy reads the column phases
// interleaved); and the plane's stage is what the default kernel computes.
TEST(TopiNnPool, PlanePools) {
  struct Case {
    OpCode op;
    Shape x;
    ops::Pool2dAttrs a;
  };
  const int64_t L = target::host().vector_lanes();
  for (const Case& c : std::vector<Case>{
           {OpCode::MaxPool2d, {1, 5, 14, 14}, pool({3, 3}, {1, 1}, {1, 1, 1, 1})},
           {OpCode::MaxPool2d, {2, 3, 7, 7}, pool({3, 3}, {1, 1}, {1, 1, 1, 1})},
           {OpCode::AvgPool2d, {1, 4, 35, 35}, pool({3, 3}, {1, 1}, {1, 1, 1, 1}, false, true)},
           {OpCode::AvgPool2d, {1, 4, 35, 35}, pool({3, 3}, {1, 1}, {1, 1, 1, 1})},
           {OpCode::MaxPool2d, {1, 4, 2 * L + 5, 2 * L + 5}, pool({3, 3}, {2, 2}, {0, 0, 0, 0}, true)},
           {OpCode::AvgPool2d, {1, 3, 2 * L - 3, 2 * L + 1}, pool({3, 3}, {2, 2}, {1, 1, 1, 1}, true, false)},
           {OpCode::MaxPool2d, {1, 3, 4 * L + 8, 4 * L + 8}, pool({3, 3}, {2, 2}, {1, 1, 1, 1})},
           {OpCode::MaxPool2d, {1, 3, 4 * L + 7, 4 * L + 9}, pool({3, 3}, {2, 2}, {1, 1, 1, 1}, true)},
           {OpCode::AvgPool2d, {1, 3, 2 * L, 2 * L}, pool({2, 2}, {2, 2}, {0, 0, 0, 0})},
           {OpCode::AvgPool2d, {1, 2, 3 * L + 1, 3 * L + 2}, pool({3, 3}, {3, 2}, {1, 0, 1, 1}, true, false)},
           // Edges: a 1x1 plane inside its padding, a window as large as the plane, dilation.
           {OpCode::MaxPool2d, {1, 2, 1, 1}, pool({3, 3}, {1, 1}, {1, 1, 1, 1})},
           {OpCode::AvgPool2d, {1, 2, 1, 1}, pool({3, 3}, {1, 1}, {1, 1, 1, 1}, false, true)},
           {OpCode::AvgPool2d, {2, 3, 7, 7}, pool({7, 7}, {1, 1}, {0, 0, 0, 0})},
           {OpCode::MaxPool2d, {1, 3, 13, 11}, pool({3, 2}, {2, 1}, {2, 1, 1, 0}, true, false, {2, 3})}}) {
    SCOPED_TRACE(std::string(ops::op_name(c.op)) + " " + std::to_string(c.x[2]) + "x" + std::to_string(c.x[3]));
    const Tensor in = rnd(c.x, 126);
    expect_native_matches_reference(c.op, attrs(c.a), {in}, kRtol, kAtol);
    ir::Expr x = ir::var("x", ir::tensor_type(c.x, DType::f32));
    ir::Expr fn = ir::function({x}, ir::call(c.op, {x}, attrs(c.a)), {{"Primitive", "1"}});
    auto computes_plane = [](const ir::Expr& f) {
      tir::PrimFunc k = native::lower_function(*f->as<ir::FunctionNode>(), "pool");
      bool plane = false;
      tir::visit_stmt(k.body, [&](const tir::Stmt& s) {
        plane |= s->kind == tir::StmtKind::Allocate && s->buffer->name == "pool2d_plane";
      });
      return plane;
    };
    EXPECT_TRUE(computes_plane(fn));
    // pool2d.rows, chosen: no plane, the reference's values.
    ir::Expr rows = strategy::with_choice(*fn->as<ir::FunctionNode>(),
                                          strategy::Choice{"pool2d.rows", "", "chosen by the test", false, {}, {}, ""});
    EXPECT_FALSE(computes_plane(rows));
    ir::Module m;
    m.functions["main"] = ir::function({x}, ir::call(c.op, {x}, attrs(c.a)));
    const Tensor want = reference::run_module(m, {in}).value().at(0);
    const Tensor got = run_native_function(rows, {in}).at(0);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], kAtol + kRtol * std::fabs(want.data<float>()[i])) << i;
  }
}
