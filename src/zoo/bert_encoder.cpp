// A BERT-style encoder: post-LayerNorm transformer layers over float32 embeddings.
#include <cmath>

#include "ops/attrs.h"
#include "ops/op.h"
#include "zoo/models.h"
#include "zoo/net_builder.h"

namespace sy::zoo {
namespace {

using ops::OpCode;
using ir::Expr;

constexpr int64_t kLayers = 4, kModel = 768, kHeads = 12, kFFN = 3072;
constexpr int64_t kHeadDim = kModel / kHeads;

class EncoderBuilder {
 public:
  EncoderBuilder(uint64_t seed, int64_t batch, int64_t seq) : nb_(seed), batch_(batch), seq_(seq) {}

  // y = x W^T + b with W [n, k] of std 1/sqrt(k), which keeps unit-variance inputs at unit variance.
  Expr dense(const Expr& x, int64_t n) {
    int64_t k = ir::shape_of(x).back();
    Expr w = ir::constant(nb_.weights({n, k}, 1.0 / std::sqrt(static_cast<double>(k))));
    Expr b = ir::constant(nb_.weights({n}, 0.02));
    return ir::call(OpCode::Dense, {x, w, b});
  }

  Expr layer_norm(const Expr& x) {
    Tensor g(DType::f32, {kModel}), b(DType::f32, {kModel});
    for (int64_t i = 0; i < kModel; ++i) {
      g.data<float>()[i] = static_cast<float>(nb_.rng().uniform(0.9, 1.1));
      b.data<float>()[i] = static_cast<float>(nb_.rng().uniform(-0.05, 0.05));
    }
    ops::LayerNormAttrs a;
    a.axis = 2;
    a.epsilon = 1e-12;
    return ir::call(OpCode::LayerNorm, {x, ir::constant(g), ir::constant(b)}, a);
  }

  // [B, S, D] -> [B, H, S, Dh] (or [B, H, Dh, S] when `keys`, ready for q @ k^T).
  Expr split_heads(const Expr& x, bool keys) {
    ops::ReshapeAttrs r;
    r.newshape = {batch_, seq_, kHeads, kHeadDim};
    ops::TransposeAttrs t;
    t.perm = keys ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3};
    return ir::call(OpCode::Transpose, {ir::call(OpCode::Reshape, {x}, r)}, t);
  }

  Expr attention(const Expr& x) {
    Expr q = split_heads(dense(x, kModel), false);
    Expr k = split_heads(dense(x, kModel), true);
    Expr v = split_heads(dense(x, kModel), false);
    Expr scale = ir::constant(Tensor::scalar<float>(1.0f / std::sqrt(static_cast<float>(kHeadDim))));
    Expr scores = ir::call(OpCode::Mul, {ir::call(OpCode::MatMul, {q, k}), scale});
    ops::AxisAttrs sm;
    sm.axis = 3;
    Expr ctx = ir::call(OpCode::MatMul, {ir::call(OpCode::Softmax, {scores}, sm), v});
    ops::TransposeAttrs t;
    t.perm = {0, 2, 1, 3};
    ops::ReshapeAttrs r;
    r.newshape = {batch_, seq_, kModel};
    return dense(ir::call(OpCode::Reshape, {ir::call(OpCode::Transpose, {ctx}, t)}, r), kModel);
  }

  Expr layer(const Expr& x) {
    Expr h = layer_norm(ir::call(OpCode::Add, {x, attention(x)}));
    ops::GeluAttrs g;
    g.approximate = "none";
    Expr ffn = dense(ir::call(OpCode::Gelu, {dense(h, kFFN)}, g), kModel);
    return layer_norm(ir::call(OpCode::Add, {h, ffn}));
  }

 private:
  NetBuilder nb_;
  int64_t batch_, seq_;
};

}  // namespace

ir::Module build_bert_encoder(const Shape& input_shape, uint64_t seed) {
  EncoderBuilder eb(seed * 1000 + 3, input_shape[0], input_shape[1]);
  Expr input = ir::var("input", ir::tensor_type(input_shape, DType::f32));
  Expr x = input;
  for (int64_t l = 0; l < kLayers; ++l) x = eb.layer(x);
  return make_module({input}, {x}, {"output"});
}

}  // namespace sy::zoo
