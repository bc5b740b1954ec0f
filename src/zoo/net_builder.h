// Building blocks for the zoo's convolutional networks: seeded weights, and layers that also
// run on a small calibration image so that BatchNorm statistics keep activations of order 1.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/expr.h"
#include "ops/op.h"
#include "support/tensor.h"
#include "support/rng.h"

namespace sy::zoo {

// A value under construction: its IR and its value on the calibration input.
struct Act {
  ir::Expr expr;
  Tensor calib;
};

// Layers with torchvision's conventions (no conv bias, BN after each conv). Random weights leave
// BatchNorm statistics meaningless, and 50 layers of them shrink or blow up activations; so,
// as one re-estimates BN statistics on data before exporting a randomly initialised network,
// every layer is also evaluated (reference kernels) on a small random calibration image with
// periodic padding (see wrap_pad in net_builder.cpp), and
// each BN's running mean and variance are the statistics of its input on that image.
class NetBuilder {
 public:
  explicit NetBuilder(uint64_t seed) : rng_(seed) {}

  // Uniform weights with the given standard deviation (Kaiming-uniform style).
  Tensor weights(Shape shape, double stddev);

  // The model's input variable, with a calibration value of shape `calib_shape` drawn
  // uniformly from [-1, 1) (the distribution of `switchyard run`'s random inputs).
  Act input(const ir::Expr& v, const Shape& calib_shape);
  // Conv without bias; He initialisation (std = sqrt(2 / fan_in)).
  Act conv(const Act& x, int64_t out_channels, int64_t kernel, int64_t stride, int64_t pad, int64_t groups = 1);
  Act batch_norm(const Act& x);
  Act relu(const Act& x);
  Act relu6(const Act& x);  // clip(0, 6)
  Act add(const Act& a, const Act& b);
  Act max_pool(const Act& x, int64_t kernel, int64_t stride, int64_t pad);
  Act global_avg_pool_flatten(const Act& x);  // NCHW -> [N, C]
  // Fully connected with bias; std = 1 / sqrt(fan_in) so outputs are of order 1.
  Act dense(const Act& x, int64_t out_features);
  Act softmax(const Act& x, int64_t axis);

  Act conv_bn(const Act& x, int64_t out_channels, int64_t kernel, int64_t stride, int64_t pad, int64_t groups = 1) {
    return batch_norm(conv(x, out_channels, kernel, stride, pad, groups));
  }

  Rng& rng() { return rng_; }

 private:
  // Builds the call and evaluates it on the calibration values; `consts` are appended to the
  // activation arguments.
  Act apply(ops::OpCode op, const std::vector<const Act*>& acts, const std::vector<Tensor>& consts,
            ir::AttrsPtr attrs);

  Rng rng_;
};

}  // namespace sy::zoo
