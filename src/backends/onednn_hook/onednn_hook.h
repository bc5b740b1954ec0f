// The oneDNN integration through a target hook: its claims (composite rules) and its lowering of
// a region into loop IR that calls oneDNN's primitives (the extern stages of src/externs/onednn),
// with activations kept in oneDNN's channel-blocked layout between its convolutions.
#pragma once
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ops/op.h"

namespace sy::backends::onednn_hook {

// A matched or outlined chain act(add(anchor, other)), each step optional.
struct Chain {
  const ir::CallNode* anchor = nullptr;  // conv2d, dense or matmul
  const ir::CallNode* add = nullptr;
  ir::Expr other;                        // the add's operand that is not the anchor
  const ir::CallNode* act = nullptr;     // relu, clip or gelu
};
Chain chain_of(const ir::Expr& root);
const ir::CallNode* as_op(const ir::Expr& e, ops::OpCode op);

std::vector<CompositeRule> rules();

// Lowers a region of onednn_hook composites (backends::LoweringHook::lower).
tir::PrimFunc lower_region(const ir::FunctionNode& fn, const std::string& name, const target::Target& target);

}  // namespace sy::backends::onednn_hook
