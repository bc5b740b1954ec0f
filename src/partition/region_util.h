// Helpers shared by the partition passes: recognising annotated and composite calls,
// substituting parameters, counting the ops and FLOPs inside a call.
#pragma once
#include <string>
#include <unordered_map>

#include "ir/expr.h"

namespace sy::partition {

inline constexpr const char* kComposite = "Composite";
inline constexpr const char* kCompiler = "Compiler";

// The attribute `key` of a call's inline function callee, or "" (also for op calls).
std::string callee_attr(const ir::Expr& e, const std::string& key);
// The function a call invokes when it is an inline function, else nullptr.
const ir::FunctionNode* inline_callee(const ir::Expr& e);

// body with each key node replaced by its value (a closed rebuild; shares untouched nodes).
ir::Expr substitute(const ir::Expr& body, const std::unordered_map<const ir::ExprNode*, ir::Expr>& map);

// Op calls inside e (through composite and region functions) and their FLOPs.
struct OpCount {
  int ops = 0;
  int64_t flops = 0;
  std::vector<std::string> names;
};
OpCount count_ops(const ir::Expr& call);

// The bytes of a tensor type (0 for other types).
int64_t tensor_bytes(const ir::Type& t);

// "nn.conv2d" or "composite mylib.conv2d_bias_relu".
std::string node_label(const ir::Expr& e);

}  // namespace sy::partition
