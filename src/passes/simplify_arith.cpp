#include "passes/simplify_arith.h"

#include "ir/visitor.h"

namespace sy::passes {

namespace {

// The value of a one-element float constant, if e is one.
bool scalar_constant(const ir::Expr& e, double* v) {
  auto* k = e->as<ir::ConstantNode>();
  if (!k || k->value.numel() != 1) return false;
  if (k->value.dtype() == DType::f32) *v = k->value.data<float>()[0];
  else if (k->value.dtype() == DType::f64) *v = k->value.data<double>()[0];
  else return false;
  return true;
}

class Simplifier : public ir::ExprMutator {
 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    double e = 0;
    if (c->is_op() && c->op == ops::OpCode::Pow && args.size() == 2 && scalar_constant(args[1], &e) && e == 2.0 &&
        ir::type_equal(args[0]->type, c->type))
      return ir::call(ops::OpCode::Mul, {args[0], args[0]});
    return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
  }
};

}  // namespace

ir::Module simplify_arith(const ir::Module& m) {
  ir::Module out = m;
  for (auto& [name, fn] : out.functions) {
    auto* f = fn->as<ir::FunctionNode>();
    if (!f) continue;
    Simplifier s;
    ir::Expr body = s.mutate(f->body);
    if (body != f->body) fn = ir::function(f->params, std::move(body), f->attrs);
  }
  return out;
}

}  // namespace sy::passes
