#include "ir/expr.h"

#include <sstream>

#include "support/error.h"

namespace sy::ir {

ConstantNode::ConstantNode(Tensor v)
    : ExprNode(kKind, tensor_type(v.shape(), v.dtype())), value(std::move(v)) {}

Expr var(std::string name, Type type) {
  SY_CHECK(type) << "var " << name << " without a type";
  return std::make_shared<VarNode>(std::move(name), std::move(type));
}

Expr constant(Tensor value) {
  SY_CHECK(value.defined()) << "constant of an undefined tensor";
  return std::make_shared<ConstantNode>(std::move(value));
}

Expr global_var(std::string name, Type ft) {
  SY_CHECK(ft && ft->kind == TypeKind::Func) << "global var " << name << " needs a function type";
  return std::make_shared<GlobalVarNode>(std::move(name), std::move(ft));
}

Expr call(OpCode op, std::vector<Expr> args, AttrsPtr attrs) {
  const OpDef& def = op_def(op);
  if (!attrs) attrs = def.make_attrs();
  int n = static_cast<int>(args.size());
  if (n < def.min_args || (def.max_args >= 0 && n > def.max_args)) {
    std::ostringstream os;
    os << def.name << ": expects ";
    if (def.max_args < 0) os << "at least " << def.min_args;
    else if (def.min_args == def.max_args) os << def.min_args;
    else os << def.min_args << " to " << def.max_args;
    os << " inputs, got " << n;
    throw Error(os.str());
  }
  std::vector<Type> types;
  types.reserve(args.size());
  for (auto& a : args) {
    SY_CHECK(a) << def.name << ": null argument";
    types.push_back(a->type);
  }
  Type t = def.relation(types, *attrs);
  SY_CHECK(t) << def.name << ": relation returned no type";
  return std::make_shared<CallNode>(std::move(t), op, nullptr, std::move(args), std::move(attrs));
}

Expr call_function(Expr callee, std::vector<Expr> args) {
  SY_CHECK(callee && callee->type && callee->type->kind == TypeKind::Func) << "callee is not a function";
  const Type& ft = callee->type;
  if (ft->fields.size() != args.size())
    throw Error("call of function with " + std::to_string(ft->fields.size()) + " parameters given " +
                std::to_string(args.size()) + " arguments");
  for (size_t i = 0; i < args.size(); ++i)
    if (!type_equal(ft->fields[i], args[i]->type))
      throw Error("function argument " + std::to_string(i) + " has type " + type_str(args[i]->type) +
                  ", parameter expects " + type_str(ft->fields[i]));
  return std::make_shared<CallNode>(ft->ret, OpCode::kCount, std::move(callee), std::move(args),
                                    std::make_shared<NoAttrs>());
}

Expr tuple(std::vector<Expr> fields) {
  std::vector<Type> ts;
  for (auto& f : fields) ts.push_back(f->type);
  return std::make_shared<TupleNode>(tuple_type(std::move(ts)), std::move(fields));
}

Expr tuple_get_item(Expr t, int index) {
  const Type& tt = t->type;
  if (!tt || tt->kind != TypeKind::Tuple) throw Error("tuple_get_item on a non-tuple of type " + type_str(tt));
  if (index < 0 || index >= static_cast<int>(tt->fields.size()))
    throw Error("tuple index " + std::to_string(index) + " out of range for " + type_str(tt));
  Type ft = tt->fields[static_cast<size_t>(index)];
  return std::make_shared<TupleGetItemNode>(std::move(ft), std::move(t), index);
}

Expr function(std::vector<Expr> params, Expr body, FuncAttrs attrs) {
  std::vector<Type> pts;
  for (auto& p : params) {
    SY_CHECK(p->kind == ExprKind::Var) << "function parameter is not a var";
    pts.push_back(p->type);
  }
  Type ft = func_type(std::move(pts), body->type);
  return std::make_shared<FunctionNode>(std::move(ft), std::move(params), std::move(body), std::move(attrs));
}

}  // namespace sy::ir
