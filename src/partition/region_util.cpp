// Helpers shared by the partition passes.
#include "partition/region_util.h"

#include "ir/visitor.h"
#include "ops/flops.h"
#include "ops/op.h"

namespace sy::partition {

const ir::FunctionNode* inline_callee(const ir::Expr& e) {
  auto* c = e->as<ir::CallNode>();
  if (!c || c->is_op()) return nullptr;
  return c->callee->as<ir::FunctionNode>();
}

std::string callee_attr(const ir::Expr& e, const std::string& key) {
  const ir::FunctionNode* f = inline_callee(e);
  if (!f) return "";
  auto it = f->attrs.find(key);
  return it == f->attrs.end() ? "" : it->second;
}

namespace {
class Substituter : public ir::ExprMutator {
 public:
  explicit Substituter(const std::unordered_map<const ir::ExprNode*, ir::Expr>& m) {
    for (auto& [k, v] : m) memo_[k] = v;
  }
};
}  // namespace

ir::Expr substitute(const ir::Expr& body, const std::unordered_map<const ir::ExprNode*, ir::Expr>& map) {
  Substituter s(map);
  return s.mutate(body);
}

OpCount count_ops(const ir::Expr& root) {
  OpCount n;
  for (const ir::Expr& e : ir::post_order(root, /*into_functions=*/true)) {
    auto* c = e->as<ir::CallNode>();
    if (!c || !c->is_op()) continue;
    ++n.ops;
    n.flops += ops::op_flops(*c);
    n.names.push_back(ops::op_name(c->op));
  }
  return n;
}

std::string node_label(const ir::Expr& e) {
  auto* c = e->as<ir::CallNode>();
  if (!c) return "?";
  if (c->is_op()) return ops::op_name(c->op);
  std::string comp = callee_attr(e, kComposite);
  if (!comp.empty()) return "composite " + comp;
  std::string comp2 = callee_attr(e, kCompiler);
  return comp2.empty() ? "function call" : "region " + comp2;
}

int64_t tensor_bytes(const ir::Type& t) {
  if (t->kind != ir::TypeKind::Tensor) return 0;
  const ir::TypeNode& tt = ir::as_tensor(t);
  int64_t n = static_cast<int64_t>(dtype_size(tt.dtype));
  for (int64_t d : tt.shape) n *= d;
  return n;
}

}  // namespace sy::partition
