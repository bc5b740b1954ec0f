// image.grid_sample: the native compute against the reference on every mode, padding and corner
// alignment, with grid points inside, on and beyond the image's edges and NaN/inf among them. (The
// reference itself is checked by the ONNX GridSample conformance cases, PyTorch's outputs.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "native_op_test_util.h"
#include "ops/attrs.h"
#include "ops/op.h"

using namespace sy;
using namespace sy::testing;
using ops::OpCode;

namespace {

template <typename A>
ir::AttrsPtr attrs(A a) {
  return std::make_shared<const A>(std::move(a));
}

Tensor uniform(Shape s, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  Tensor x(DType::f32, std::move(s));
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(d(rng));
  return x;
}

TEST(TopiGridSample, EveryModePaddingAndAlignmentMatchesTheReference) {
  const Tensor data = uniform({2, 3, 5, 7}, 11, -1, 1);
  // Points up to 1.8x beyond the edges (reflection folds them more than once), exact edges and
  // centres, and the non-finite values PyTorch leaves to C's conversions.
  Tensor grid = uniform({2, 4, 6, 2}, 12, -1.8, 1.8);
  float* g = grid.data<float>();
  const float specials[] = {-1.0f, 1.0f, 0.0f, 0.5f, std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 3.0f, -3.7f};
  for (size_t i = 0; i < std::size(specials); ++i) g[i * 5 + 1] = specials[i];
  std::vector<NativeCase> cases;
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        ops::GridSampleAttrs a;
        a.mode = mode;
        a.padding_mode = padding;
        a.align_corners = align;
        cases.push_back({OpCode::GridSample, attrs(a), {data, grid}, 1e-5, 1e-6,
                         std::string(mode) + " " + padding + (align ? " align_corners" : "")});
      }
  expect_native_cases_match_reference(cases);
}

TEST(TopiGridSample, AnIdentityGridGivesTheImageBack) {
  // align_corners: grid x = -1 + 2 * j / (W - 1) lands on pixel j exactly.
  const int64_t H = 4, W = 6;
  const Tensor data = uniform({1, 2, H, W}, 21, -1, 1);
  Tensor grid(DType::f32, {1, H, W, 2});
  for (int64_t i = 0; i < H; ++i)
    for (int64_t j = 0; j < W; ++j) {
      grid.data<float>()[(i * W + j) * 2] = static_cast<float>(-1.0 + 2.0 * static_cast<double>(j) / (W - 1));
      grid.data<float>()[(i * W + j) * 2 + 1] = static_cast<float>(-1.0 + 2.0 * static_cast<double>(i) / (H - 1));
    }
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    ops::GridSampleAttrs a;
    a.mode = mode;
    a.align_corners = true;
    const std::vector<Tensor> out = run_native_op(OpCode::GridSample, attrs(a), {data, grid});
    for (int64_t i = 0; i < data.numel(); ++i)
      EXPECT_NEAR(out[0].data<float>()[i], data.data<float>()[i], 2e-6) << mode << " at " << i;
  }
}

}  // namespace
