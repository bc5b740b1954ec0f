// Layers of the zoo's convolutional networks, calibrated on a small random image.
#include "zoo/net_builder.h"

#include <algorithm>
#include <cmath>

#include "ops/attrs.h"
#include "ops/evaluator.h"
#include "ops/op.h"

namespace sy::zoo {

using ops::OpCode;

namespace {

// Periodic padding of an NCHW tensor: the calibration image behaves like a tile of an infinite
// image, so its statistics are those of the interior of a large image rather than of a small
// image dominated by zero-padded borders (which would under-estimate deep layers' variances, an
// error that compounds through the network).
Tensor wrap_pad(const Tensor& x, int64_t p) {
  if (p == 0) return x;
  const Shape& s = x.shape();
  int64_t nc = s[0] * s[1], h = s[2], w = s[3], ho = h + 2 * p, wo = w + 2 * p;
  Tensor out(DType::f32, {s[0], s[1], ho, wo});
  const float* in = x.data<float>();
  float* o = out.data<float>();
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t i = 0; i < ho; ++i)
      for (int64_t j = 0; j < wo; ++j) {
        int64_t si = ((i - p) % h + h) % h, sj = ((j - p) % w + w) % w;
        o[(c * ho + i) * wo + j] = in[(c * h + si) * w + sj];
      }
  return out;
}

Tensor eval(OpCode op, const ir::Attrs& attrs, const std::vector<Tensor>& values) {
  std::vector<ir::Type> types;
  for (const Tensor& v : values) types.push_back(ir::tensor_type(v.shape(), v.dtype()));
  return ops::evaluator().eval(op, attrs, values, ops::op_def(op).relation(types, attrs)).at(0);
}

}  // namespace

Tensor NetBuilder::weights(Shape shape, double stddev) {
  Tensor t(DType::f32, std::move(shape));
  double a = std::sqrt(3.0) * stddev;  // U(-a, a) has standard deviation a / sqrt(3)
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(rng_.uniform(-a, a));
  return t;
}

Act NetBuilder::input(const ir::Expr& v, const Shape& calib_shape) {
  Tensor t(DType::f32, calib_shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(rng_.uniform(-1.0, 1.0));
  return Act{v, t};
}

Act NetBuilder::apply(OpCode op, const std::vector<const Act*>& acts, const std::vector<Tensor>& consts,
                      ir::AttrsPtr attrs) {
  if (!attrs) attrs = ops::op_def(op).make_attrs();
  std::vector<ir::Expr> args;
  std::vector<Tensor> values;
  for (const Act* a : acts) {
    args.push_back(a->expr);
    values.push_back(a->calib);
  }
  for (const Tensor& c : consts) {
    args.push_back(ir::constant(c));
    values.push_back(c);
  }
  Tensor calib = eval(op, *attrs, values);
  return Act{ir::call(op, std::move(args), attrs), std::move(calib)};
}

Act NetBuilder::conv(const Act& x, int64_t cout, int64_t k, int64_t stride, int64_t pad, int64_t groups) {
  int64_t cin_g = ir::shape_of(x.expr)[1] / groups;
  Tensor w = weights({cout, cin_g, k, k}, std::sqrt(2.0 / static_cast<double>(cin_g * k * k)));
  auto a = std::make_shared<ops::Conv2dAttrs>();
  a->strides = {stride, stride};
  a->padding = {pad, pad, pad, pad};
  a->groups = groups;
  ops::Conv2dAttrs unpadded = *a;
  unpadded.padding = {0, 0, 0, 0};
  Tensor calib = eval(OpCode::Conv2d, unpadded, {wrap_pad(x.calib, pad), w});
  return Act{ir::call(OpCode::Conv2d, {x.expr, ir::constant(w)}, a), calib};
}

Act NetBuilder::batch_norm(const Act& x) {
  const Shape& s = x.calib.shape();
  int64_t n = s[0], c = s[1], hw = s[2] * s[3];
  Tensor gamma(DType::f32, {c}), beta(DType::f32, {c}), mean(DType::f32, {c}), var(DType::f32, {c});
  const float* p = x.calib.data<float>();
  double var_sum = 0;
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < hw; ++i) {
        double v = p[(b * c + ch) * hw + i];
        sum += v;
        sq += v * v;
      }
    double m = sum / static_cast<double>(n * hw);
    mean.data<float>()[ch] = static_cast<float>(m);
    var.data<float>()[ch] = static_cast<float>(std::max(sq / static_cast<double>(n * hw) - m * m, 0.0));
    var_sum += var.data<float>()[ch];
    gamma.data<float>()[ch] = static_cast<float>(rng_.uniform(0.8, 1.2));
    beta.data<float>()[ch] = static_cast<float>(rng_.uniform(-0.1, 0.1));
  }
  // Deep layers see only a few calibration pixels per channel, and a variance under-estimated
  // by chance amplifies that channel (and everything after it). Shrink each estimate towards the
  // layer's average as if the average had been seen on kPrior more pixels.
  constexpr double kPrior = 16;
  double samples = static_cast<double>(n * hw), avg = var_sum / static_cast<double>(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    float& v = var.data<float>()[ch];
    v = static_cast<float>((samples * v + kPrior * avg) / (samples + kPrior) + 1e-6);
  }
  return apply(OpCode::BatchNorm, {&x}, {gamma, beta, mean, var}, std::make_shared<ops::BatchNormAttrs>());
}

Act NetBuilder::relu(const Act& x) { return apply(OpCode::Relu, {&x}, {}, nullptr); }

Act NetBuilder::relu6(const Act& x) {
  auto a = std::make_shared<ops::ClipAttrs>();
  a->min = 0.0;
  a->max = 6.0;
  return apply(OpCode::Clip, {&x}, {}, a);
}

Act NetBuilder::add(const Act& a, const Act& b) { return apply(OpCode::Add, {&a, &b}, {}, nullptr); }

Act NetBuilder::max_pool(const Act& x, int64_t kernel, int64_t stride, int64_t pad) {
  auto a = std::make_shared<ops::Pool2dAttrs>();
  a->kernel = {kernel, kernel};
  a->strides = {stride, stride};
  a->padding = {pad, pad, pad, pad};
  ops::Pool2dAttrs unpadded = *a;
  unpadded.padding = {0, 0, 0, 0};
  Tensor calib = eval(OpCode::MaxPool2d, unpadded, {wrap_pad(x.calib, pad)});
  return Act{ir::call(OpCode::MaxPool2d, {x.expr}, a), calib};
}

Act NetBuilder::global_avg_pool_flatten(const Act& x) {
  Act pooled = apply(OpCode::GlobalAvgPool2d, {&x}, {}, nullptr);
  const Shape& s = ir::shape_of(x.expr);
  auto r = std::make_shared<ops::ReshapeAttrs>();
  r->newshape = {s[0], s[1]};
  Act flat{ir::call(OpCode::Reshape, {pooled.expr}, r), pooled.calib.reshaped({pooled.calib.shape()[0], s[1]})};
  return flat;
}

Act NetBuilder::dense(const Act& x, int64_t n) {
  int64_t k = ir::shape_of(x.expr).back();
  Tensor w = weights({n, k}, 1.0 / std::sqrt(static_cast<double>(k)));
  Tensor b = weights({n}, 0.01);
  return apply(OpCode::Dense, {&x}, {w, b}, nullptr);
}

Act NetBuilder::softmax(const Act& x, int64_t axis) {
  auto a = std::make_shared<ops::AxisAttrs>();
  a->axis = axis;
  return apply(OpCode::Softmax, {&x}, {}, a);
}

}  // namespace sy::zoo
