// Reference kernels: convolution, pooling, matmul/dense and normalisations.
#include <random>

#include "ops/op.h"
#include "reference_test_util.h"

using namespace sy;
using namespace sy::reftest;
using ops::OpCode;

namespace {

ops::Conv2dAttrs conv_attrs(std::vector<int64_t> strides, std::vector<int64_t> padding, std::vector<int64_t> dilation = {1, 1},
                            int64_t groups = 1) {
  ops::Conv2dAttrs a;
  a.strides = std::move(strides);
  a.padding = std::move(padding);
  a.dilation = std::move(dilation);
  a.groups = groups;
  return a;
}

Tensor random_f32(Shape s, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Tensor t(DType::f32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Textbook convolution, one output element at a time.
Tensor naive_conv(const Tensor& x, const Tensor& w, const ops::Conv2dAttrs& a, Shape out_shape) {
  Tensor y(DType::f32, out_shape);
  const auto& xs = x.shape();
  const auto& ws = w.shape();
  const int64_t Og = ws[0] / a.groups, Cg = ws[1];
  auto X = [&](int64_t n, int64_t c, int64_t h, int64_t ww) { return x.data<float>()[((n * xs[1] + c) * xs[2] + h) * xs[3] + ww]; };
  for (int64_t n = 0; n < out_shape[0]; ++n)
    for (int64_t o = 0; o < out_shape[1]; ++o)
      for (int64_t oh = 0; oh < out_shape[2]; ++oh)
        for (int64_t ow = 0; ow < out_shape[3]; ++ow) {
          double s = 0;
          for (int64_t ic = 0; ic < Cg; ++ic)
            for (int64_t kh = 0; kh < ws[2]; ++kh)
              for (int64_t kw = 0; kw < ws[3]; ++kw) {
                int64_t ih = oh * a.strides[0] - a.padding[0] + kh * a.dilation[0];
                int64_t iw = ow * a.strides[1] - a.padding[1] + kw * a.dilation[1];
                if (ih < 0 || iw < 0 || ih >= xs[2] || iw >= xs[3]) continue;
                s += double(X(n, (o / Og) * Cg + ic, ih, iw)) * w.data<float>()[((o * Cg + ic) * ws[2] + kh) * ws[3] + kw];
              }
          y.data<float>()[((n * out_shape[1] + o) * out_shape[2] + oh) * out_shape[3] + ow] = float(s);
        }
  return y;
}

int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

}  // namespace

TEST(ReferenceConv, ValidPaddedAndStrided) {
  Tensor x = iota_f32({1, 1, 3, 3}, 1.0f);
  Tensor ones22 = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_near(run(OpCode::Conv2d, {x, ones22}, {1, 1, 2, 2}, DType::f32, conv_attrs({1, 1}, {0, 0, 0, 0})),
              {12, 16, 24, 28});
  Tensor ones33 = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  expect_near(run(OpCode::Conv2d, {x, ones33}, {1, 1, 3, 3}, DType::f32, conv_attrs({1, 1}, {1, 1, 1, 1})),
              {12, 21, 16, 27, 45, 33, 24, 39, 28});
  expect_near(run(OpCode::Conv2d, {x, ones33}, {1, 1, 2, 2}, DType::f32, conv_attrs({2, 2}, {1, 1, 1, 1})),
              {12, 16, 24, 28});
  // Left-only padding: [0, 1, 2, 3] with a 1x2 kernel.
  Tensor row = f32({1, 1, 1, 3}, {1, 2, 3});
  Tensor k12 = f32({1, 1, 1, 2}, {1, 1});
  expect_near(run(OpCode::Conv2d, {row, k12}, {1, 1, 1, 3}, DType::f32, conv_attrs({1, 1}, {0, 1, 0, 0})), {1, 3, 5});
}

TEST(ReferenceConv, GroupsAndBias) {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = f32({2, 1, 1, 1}, {2, 3});
  Tensor b = f32({2}, {1, -1});
  expect_near(run(OpCode::Conv2d, {x, w, b}, {1, 2, 2, 2}, DType::f32, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)),
              {3, 5, 7, 9, 14, 17, 20, 23});
}

TEST(ReferenceConv, Dilation) {
  Tensor x = iota_f32({1, 1, 4, 4});
  Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_near(run(OpCode::Conv2d, {x, w}, {1, 1, 2, 2}, DType::f32, conv_attrs({1, 1}, {0, 0, 0, 0}, {2, 2})),
              {20, 24, 36, 40});
}

TEST(ReferenceConv, MatchesNaiveOnRandomGeometries) {
  std::mt19937 rng(7);
  struct Case { int64_t n, c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g; };
  const Case cases[] = {
      {2, 4, 9, 11, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // same padding
      {1, 6, 10, 10, 6, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 6},  // depthwise, stride 2, asymmetric pad
      {1, 4, 12, 9, 8, 3, 2, 2, 1, 2, 0, 1, 3, 2, 3, 2},   // groups 2, dilation, uneven everything
      {1, 3, 7, 7, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},    // 1x1
      {1, 2, 5, 6, 2, 5, 5, 3, 2, 2, 2, 2, 2, 1, 1, 1},    // kernel as large as the input
  };
  for (const Case& c : cases) {
    auto a = conv_attrs({c.sh, c.sw}, {c.pt, c.pl, c.pb, c.pr}, {c.dh, c.dw}, c.g);
    Tensor x = random_f32({c.n, c.c, c.h, c.w}, rng);
    Tensor w = random_f32({c.o, c.c / c.g, c.kh, c.kw}, rng);
    Shape out{c.n, c.o, conv_out(c.h, c.kh, c.sh, c.pt, c.pb, c.dh), conv_out(c.w, c.kw, c.sw, c.pl, c.pr, c.dw)};
    Tensor y = run(OpCode::Conv2d, {x, w}, out, DType::f32, a);
    expect_near(y, values(naive_conv(x, w, a, out)), 1e-4);
  }
}

TEST(ReferenceConv, TransposeMatchesOnnxExample) {
  // ONNX ConvTranspose example: 3x3 input, two 3x3 all-ones filters.
  Tensor x = iota_f32({1, 1, 3, 3});
  Tensor w = f32({1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  std::vector<double> plane = {0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  ops::ConvTranspose2dAttrs a;
  expect_near(run(OpCode::ConvTranspose2d, {x, w}, {1, 2, 5, 5}, DType::f32, a), want);
}

TEST(ReferenceConv, TransposeStridedPaddedGroupedMatchesGatherFormula) {
  std::mt19937 rng(3);
  ops::ConvTranspose2dAttrs a;
  a.strides = {2, 3};
  a.padding = {1, 0, 0, 2};
  a.dilation = {1, 2};
  a.output_padding = {1, 0};
  a.groups = 2;
  const int64_t N = 1, C = 4, H = 3, W = 4, Og = 3, KH = 3, KW = 2;
  Tensor x = random_f32({N, C, H, W}, rng);
  Tensor w = random_f32({C, Og, KH, KW}, rng);
  Tensor b = random_f32({Og * 2}, rng);
  const int64_t OH = (H - 1) * 2 - 1 - 0 + (KH - 1) * 1 + 1 + 1;
  const int64_t OW = (W - 1) * 3 - 0 - 2 + (KW - 1) * 2 + 1 + 0;
  Tensor y = run(OpCode::ConvTranspose2d, {x, w, b}, {N, Og * 2, OH, OW}, DType::f32, a);
  // out[o, oh, ow] = b[o] + sum x[ic, ih, iw] * w[ic, o % Og, kh, kw] where oh = ih*s - p + kh*d.
  std::vector<double> want;
  for (int64_t o = 0; o < Og * 2; ++o)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double s = b.data<float>()[o];
        for (int64_t icl = 0; icl < C / 2; ++icl) {
          int64_t ic = (o / Og) * (C / 2) + icl;
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              int64_t th = oh + 1 - kh * 1, tw = ow + 0 - kw * 2;
              if (th % 2 || tw % 3 || th < 0 || tw < 0 || th / 2 >= H || tw / 3 >= W) continue;
              s += double(x.data<float>()[(ic * H + th / 2) * W + tw / 3]) *
                   w.data<float>()[((ic * Og + o % Og) * KH + kh) * KW + kw];
            }
        }
        want.push_back(s);
      }
  expect_near(y, want, 1e-4);
}

TEST(ReferencePool, MaxAndCeilMode) {
  ops::Pool2dAttrs a;
  a.kernel = {2, 2};
  a.strides = {2, 2};
  expect_near(run(OpCode::MaxPool2d, {iota_f32({1, 1, 4, 4})}, {1, 1, 2, 2}, DType::f32, a), {5, 7, 13, 15});
  // ONNX averagepool_2d_ceil / maxpool_2d_ceil: 4x4 input, 3x3 kernel, stride 2, ceil mode.
  a.kernel = {3, 3};
  a.ceil_mode = true;
  Tensor x = iota_f32({1, 1, 4, 4}, 1.0f);
  expect_near(run(OpCode::AvgPool2d, {x}, {1, 1, 2, 2}, DType::f32, a), {6, 7.5, 12, 13.5});
  expect_near(run(OpCode::MaxPool2d, {x}, {1, 1, 2, 2}, DType::f32, a), {11, 12, 15, 16});
}

TEST(ReferencePool, AvgCountIncludePad) {
  ops::Pool2dAttrs a;
  a.kernel = {2, 2};
  a.padding = {1, 1, 1, 1};
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_near(run(OpCode::AvgPool2d, {x}, {1, 1, 3, 3}, DType::f32, a), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  a.count_include_pad = true;
  expect_near(run(OpCode::AvgPool2d, {x}, {1, 1, 3, 3}, DType::f32, a),
              {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1});
  // Padding never wins a max.
  Tensor neg = f32({1, 1, 2, 2}, {-1, -2, -3, -4});
  expect_near(run(OpCode::MaxPool2d, {neg}, {1, 1, 3, 3}, DType::f32, a), {-1, -1, -2, -1, -1, -2, -3, -3, -4});
}

TEST(ReferencePool, DilatedMaxAndLp) {
  ops::Pool2dAttrs a;
  a.kernel = {2, 2};
  a.dilation = {2, 2};
  expect_near(run(OpCode::MaxPool2d, {iota_f32({1, 1, 4, 4})}, {1, 1, 2, 2}, DType::f32, a), {10, 11, 14, 15});
  ops::Pool2dAttrs lp;
  lp.kernel = {2, 2};
  lp.strides = {2, 2};
  expect_near(run(OpCode::LpPool2d, {f32({1, 1, 2, 2}, {3, -4, 0, 0})}, {1, 1, 1, 1}, DType::f32, lp), {5});
}

TEST(ReferencePool, Global) {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8});
  expect_near(run(OpCode::GlobalAvgPool2d, {x}, {1, 2, 1, 1}), {2.5, -3.5});
  expect_near(run(OpCode::GlobalMaxPool2d, {x}, {1, 2, 1, 1}), {4, -1});
}

TEST(ReferenceMatmul, PlainBatchedAndVectors) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expect_near(run(OpCode::MatMul, {a, b}, {2, 2}), {58, 64, 139, 154});
  expect_near(run(OpCode::MatMul, {f32({3}, {1, 2, 3}), b}, {2}), {58, 64});
  expect_near(run(OpCode::MatMul, {a, f32({3}, {1, 0, -1})}, {2}), {-2, -2});
  // Batch broadcast: [2, 1, 3] x [3, 2] and [1, 3] x [2, 3, 2].
  Tensor a3 = f32({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  expect_near(run(OpCode::MatMul, {a3, b}, {2, 1, 2}), {58, 64, 139, 154});
  Tensor b3 = f32({2, 3, 2}, {7, 8, 9, 10, 11, 12, 1, 0, 0, 1, 0, 0});
  expect_near(run(OpCode::MatMul, {f32({1, 3}, {1, 2, 3}), b3}, {2, 1, 2}), {58, 64, 1, 2});
  Tensor ai = i32({1, 2}, {2, 3}), bi = i32({2, 1}, {4, 5});
  expect_near(run(OpCode::MatMul, {ai, bi}, {1, 1}, DType::i32), {23});
}

TEST(ReferenceMatmul, LargeMatchesNaive) {
  std::mt19937 rng(1);
  const int64_t M = 37, K = 300, N = 600;  // several column blocks, parallel path
  Tensor a = random_f32({M, K}, rng), b = random_f32({K, N}, rng);
  Tensor y = run(OpCode::MatMul, {a, b}, {M, N});
  for (int64_t i = 0; i < M; i += 9)
    for (int64_t j = 0; j < N; j += 61) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a.data<float>()[i * K + k]) * b.data<float>()[k * N + j];
      EXPECT_NEAR(y.data<float>()[i * N + j], s, 1e-3);
    }
}

TEST(ReferenceMatmul, Dense) {
  Tensor x = f32({2, 3}, {1, 2, 3, -1, 0, 1});
  Tensor w = f32({2, 3}, {1, 0, 0, 1, 1, 1});
  expect_near(run(OpCode::Dense, {x, w, f32({2}, {10, 20})}, {2, 2}), {11, 26, 9, 20});
  expect_near(run(OpCode::Dense, {x.reshaped({1, 2, 3}), w}, {1, 2, 2}), {1, 6, -1, 0});
}

TEST(ReferenceNorm, SoftmaxIsStableAndNormalised) {
  ops::AxisAttrs a;
  a.axis = 0;
  expect_near(run(OpCode::Softmax, {f32({3}, {1, 2, 3})}, {3}, DType::f32, a), {0.09003057, 0.24472847, 0.66524096});
  expect_near(run(OpCode::Softmax, {f32({3}, {1000, 1001, 1002})}, {3}, DType::f32, a),
              {0.09003057, 0.24472847, 0.66524096});
  expect_near(run(OpCode::LogSoftmax, {f32({3}, {1000, 1001, 1002})}, {3}, DType::f32, a),
              {-2.40760596, -1.40760596, -0.40760596});
  // Axis 0 of a 2x2: columns are normalised.
  expect_near(run(OpCode::Softmax, {f32({2, 2}, {0, 5, 0, 5})}, {2, 2}, DType::f32, a), {0.5, 0.5, 0.5, 0.5});
}

TEST(ReferenceNorm, LayerNorm) {
  ops::LayerNormAttrs a;
  a.axis = 1;
  a.epsilon = 0;
  Tensor x = f32({2, 4}, {1, 2, 3, 4, 0, 0, 4, 4});
  Tensor scale = f32({4}, {2, 2, 2, 2}), bias = f32({4}, {1, 1, 1, 1});
  const double k = 1 / std::sqrt(1.25);
  expect_near(run(OpCode::LayerNorm, {x, scale, bias}, {2, 4}, DType::f32, a),
              {1 - 3 * k, 1 - k, 1 + k, 1 + 3 * k, -1, -1, 3, 3});
  // A constant row with epsilon 0 is 0/0, as in ONNX.
  expect_near(run(OpCode::LayerNorm, {f32({1, 2}, {2, 2}), f32({2}, {1, 1})}, {1, 2}, DType::f32, a),
              {std::nan(""), std::nan("")});
  a.epsilon = 1e-5;
  expect_near(run(OpCode::LayerNorm, {x, scale}, {2, 4}, DType::f32, a),
              {-3 / std::sqrt(1.25 + 1e-5), -1 / std::sqrt(1.25 + 1e-5), 1 / std::sqrt(1.25 + 1e-5),
               3 / std::sqrt(1.25 + 1e-5), -4 / std::sqrt(4 + 1e-5), -4 / std::sqrt(4 + 1e-5),
               4 / std::sqrt(4 + 1e-5), 4 / std::sqrt(4 + 1e-5)});
}

TEST(ReferenceNorm, BatchNormAndInstanceNorm) {
  ops::BatchNormAttrs bn;
  bn.epsilon = 0;
  Tensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  expect_near(run(OpCode::BatchNorm, {x, f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {1, 3}), f32({2}, {4, 1})},
                  {1, 2, 1, 2}, DType::f32, bn),
              {0, 0.5, 1, 3});
  ops::EpsilonAttrs in;
  in.epsilon = 0;
  const double k = 1 / std::sqrt(0.25);
  expect_near(run(OpCode::InstanceNorm, {x, f32({2}, {1, 1}), f32({2}, {0, 10})}, {1, 2, 1, 2}, DType::f32, in),
              {-0.5 * k, 0.5 * k, 10 - 0.5 * k, 10 + 0.5 * k});
}

TEST(ReferenceNorm, LRN) {
  ops::LRNAttrs a;
  a.size = 3;
  a.alpha = 3;  // alpha / size = 1
  a.beta = 1;
  a.bias = 1;
  expect_near(run(OpCode::LRN, {f32({1, 3, 1, 1}, {1, 2, 3})}, {1, 3, 1, 1}, DType::f32, a), {1.0 / 6, 2.0 / 15, 3.0 / 14});
}
