// The zoo's model builders (internal to src/zoo; use zoo.h). Each takes the full input shape,
// already validated by the registry, and a seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"

namespace sy::zoo {

// torchvision's ResNet (v1.5: stride on the 3x3 conv); depth 18 or 50. Input NCHW, 3 channels.
ir::Module build_resnet(int depth, const Shape& input_shape, uint64_t seed);
// torchvision's MobileNetV2 (width 1.0, ReLU6). Input NCHW, 3 channels.
ir::Module build_mobilenet_v2(const Shape& input_shape, uint64_t seed);
// BERT-style post-LN encoder: 4 layers, d_model 768, 12 heads, FFN 3072, erf GELU. Input
// [batch, seq, 768] float32 embeddings.
ir::Module build_bert_encoder(const Shape& input_shape, uint64_t seed);
// Two dense layers 64 -> 128 -> 10 with outputs "logits" and "probs" (softmax); for quick tests.
ir::Module build_mlp(const Shape& input_shape, uint64_t seed);

// The calibration image of a CNN with NCHW input `input_shape`: one 112x112 image (enough for
// BatchNorm statistics, cheap enough to evaluate at build time).
Shape calibration_shape(const Shape& input_shape);

// A module whose main takes `params` and returns `outputs` (one tensor, or a tuple of several),
// named `names`.
ir::Module make_module(std::vector<ir::Expr> params, std::vector<ir::Expr> outputs, std::vector<std::string> names);

}  // namespace sy::zoo
