// Patterns of ops that exporters spell out in several primitive ops, which several backends claim
// as one composite (so that each does not carry its own copy).
#pragma once
#include <string>

#include "pattern/pattern.h"

namespace sy::pattern {

// GELU as ONNX exports of PyTorch spell it, x * (erf(x / sqrt 2) + 1) * 0.5, in its operand orders.
Pattern erf_gelu();

// For a match of erf_gelu(): "" when its constants are GELU's (float32 scalars sqrt 2, 1 and
// one factor 0.5) and every step reads the one input x (then *x is set), else why not.
std::string check_erf_gelu(const Match& m, ir::Expr* x);

// SiLU (swish) as exporters spell it, x * sigmoid(x) or sigmoid(x) * x, over the pattern x; the
// match is accepted only when both x are the same node, else refused with `why`.
Pattern silu(const Pattern& x, const std::string& why);
// x when the call is x * sigmoid(x) or sigmoid(x) * x of one node x, else nullptr.
const ir::Expr* silu_operand(const ir::CallNode& call);

}  // namespace sy::pattern
