// Constant folding with the registered op evaluator (the reference kernels).
#include "passes/fold_constants.h"

#include "ir/visitor.h"
#include "ops/evaluator.h"
#include "ops/op.h"

namespace sy::passes {

namespace {

bool all_constant(const std::vector<ir::Expr>& args) {
  for (const auto& a : args)
    if (a->kind != ir::ExprKind::Constant) return false;
  return true;
}

class Folder : public ir::ExprMutator {
 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    return fold_node(ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee)));
  }
  ir::Expr rewrite_tuple_get_item(const ir::Expr& orig, const ir::TupleGetItemNode* t, ir::Expr nt) override {
    return fold_node(ExprMutator::rewrite_tuple_get_item(orig, t, std::move(nt)));
  }
  // Function bodies are folded separately by fold_constants (their params are not constants).
};

}  // namespace

ir::Expr fold_node(const ir::Expr& e) {
  if (auto* g = e->as<ir::TupleGetItemNode>()) {
    if (auto* t = g->tuple->as<ir::TupleNode>()) return t->fields[static_cast<size_t>(g->index)];
    return e;
  }
  auto* c = e->as<ir::CallNode>();
  if (!c || !c->is_op() || c->args.empty() || !all_constant(c->args)) return e;
  std::vector<Tensor> args;
  args.reserve(c->args.size());
  for (const auto& a : c->args) args.push_back(a->as<ir::ConstantNode>()->value);
  std::vector<Tensor> outs = ops::evaluator().eval(c->op, *c->attrs, args, c->type);
  if (ir::is_tensor(c->type)) {
    SY_CHECK(outs.size() == 1) << ops::op_name(c->op) << ": kernel returned " << outs.size() << " tensors";
    return ir::constant(std::move(outs[0]));
  }
  SY_CHECK(outs.size() == c->type->fields.size())
      << ops::op_name(c->op) << ": kernel returned " << outs.size() << " tensors for a tuple of "
      << c->type->fields.size();
  std::vector<ir::Expr> fields;
  for (auto& t : outs) fields.push_back(ir::constant(std::move(t)));
  return ir::tuple(std::move(fields));
}

ir::Module fold_constants(const ir::Module& m) {
  ir::Module out = m;
  for (auto& [name, fn] : out.functions) {
    auto* f = fn->as<ir::FunctionNode>();
    SY_CHECK(f) << "module entry @" << name << " is not a function";
    Folder folder;
    ir::Expr body = folder.mutate(f->body);
    if (body != f->body) fn = ir::function(f->params, std::move(body), f->attrs);
  }
  return out;
}

}  // namespace sy::passes
