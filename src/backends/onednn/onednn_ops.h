// What the oneDNN backend can run, op by op: support checks with reasons, and the mapping of
// elementwise ops onto oneDNN eltwise algorithms (shared by the rules and the runtime).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ops/op.h"

namespace sy::backends::onednn {

// One oneDNN eltwise step: alg(alpha, beta). Kept free of oneDNN types so the rules need no
// oneDNN header.
enum class EltAlg { Relu, Tanh, Elu, Square, Abs, Sqrt, Linear, SoftRelu, Mish, Logistic, Exp,
                    GeluTanh, GeluErf, Log, Clip, Pow, Round, HardSwish, Swish };
struct EltStep {
  EltAlg alg;
  float alpha = 0.f;
  float beta = 0.f;
};

// The eltwise steps computing a unary op, or nullopt when oneDNN has no algorithm for it.
std::optional<std::vector<EltStep>> eltwise_steps(const ir::CallNode& call);

// Binary ops oneDNN's binary primitive (and binary post-op) computes.
bool is_binary_op(ops::OpCode op);
// Unary ops that make sense as a fused activation after conv/dense/matmul/batch-norm.
bool is_activation_op(ops::OpCode op);

// "" when oneDNN can run this single op call, else the reason ("onednn conv2d: groups=3 with 5
// input channels"). Used by supports_op and by every composite check.
std::string check_op(const ir::CallNode& call);

// The op's name as used in reasons: "conv2d" for nn.conv2d.
std::string short_name(ops::OpCode op);

// Whether e is a float32 constant with one element (any rank); sets *value.
bool scalar_constant(const ir::Expr& e, float* value);

// Whether the node is a plain op call of `op`.
inline const ir::CallNode* as_op(const ir::Expr& e, ops::OpCode op) {
  auto* c = e->as<ir::CallNode>();
  return c && c->is_op() && c->op == op ? c : nullptr;
}

}  // namespace sy::backends::onednn
