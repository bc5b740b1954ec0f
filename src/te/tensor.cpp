#include "te/tensor.h"

#include <unordered_set>

#include "tir/functor.h"

namespace sy::te {

namespace {

void check_shape(const Shape& s, const std::string& name) {
  for (int64_t d : s)
    if (d <= 0) throw Error("te: " + name + " has a non-positive dimension in shape " + shape_str(s));
}

void check_no_nested_reduce(const Expr& e, bool top, const std::string& name) {
  if (e->kind == tir::ExprKind::Reduce && !top)
    throw Error("te: in " + name + ", a reduction must be the whole body of the compute");
  for (const auto& o : e->operands) check_no_nested_reduce(o, false, name);
}

}  // namespace

const std::vector<IterVar>& OperationNode::reduce_axes() const {
  static const std::vector<IterVar> none;
  return is_reduction() ? body->reduce_axes : none;
}

std::vector<Operation> OperationNode::inputs() const {
  std::vector<Operation> out;
  std::unordered_set<const void*> seen;
  if (kind == OpKind::Extern) {
    for (const auto& o : extern_inputs)
      if (seen.insert(o.get()).second) out.push_back(o);
    return out;
  }
  if (!body) return out;
  tir::visit_expr(body, [&](const Expr& e) {
    if (e->kind != tir::ExprKind::TensorRead) return;
    auto op = std::dynamic_pointer_cast<const OperationNode>(e->producer);
    SY_CHECK(op) << "tensor read of a producer that is not an operation";
    if (seen.insert(op.get()).second) out.push_back(op);
  });
  return out;
}

Expr Tensor::operator()(std::vector<Expr> indices) const {
  if (!op_) throw Error("te: indexing an undefined tensor");
  return tir::tensor_read(op_, std::move(indices));
}

Tensor placeholder(Shape shape, DType dtype, std::string name) {
  check_shape(shape, name);
  auto n = std::make_shared<OperationNode>();
  n->kind = OpKind::Placeholder;
  n->name = std::move(name);
  n->shape = std::move(shape);
  n->dtype = dtype;
  return Tensor(n);
}

Tensor compute(Shape shape, const std::function<Expr(const std::vector<Expr>&)>& body, std::string name) {
  check_shape(shape, name);
  static const char* kAxisNames[] = {"i", "j", "k", "l", "m", "n"};
  auto n = std::make_shared<OperationNode>();
  n->kind = OpKind::Compute;
  n->name = std::move(name);
  std::vector<Expr> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string an = d < 6 ? kAxisNames[d] : "ax" + std::to_string(d);
    n->axes.push_back({tir::var(an), shape[d]});
    vars.push_back(n->axes.back().var);
  }
  n->shape = std::move(shape);
  Expr b = body(vars);
  if (!b) throw Error("te: the body of " + n->name + " is undefined");
  check_no_nested_reduce(b, true, n->name);
  n->dtype = b->dtype;
  n->body = std::move(b);
  return Tensor(n);
}

IterVar reduce_axis(int64_t extent, std::string name) {
  if (extent <= 0) throw Error("te: reduce axis " + name + " has non-positive extent " + std::to_string(extent));
  return {tir::var(std::move(name)), extent};
}

Expr sum(Expr source, std::vector<IterVar> axes) { return tir::reduce(tir::ReduceKind::Sum, std::move(source), std::move(axes)); }
Expr reduce_max(Expr source, std::vector<IterVar> axes) { return tir::reduce(tir::ReduceKind::Max, std::move(source), std::move(axes)); }
Expr reduce_min(Expr source, std::vector<IterVar> axes) { return tir::reduce(tir::ReduceKind::Min, std::move(source), std::move(axes)); }

namespace {
Tensor make_extern(std::string name, Shape shape, DType dtype, std::vector<Tensor> inputs, std::string func,
                   std::vector<Expr> args, bool stateful) {
  check_shape(shape, name);
  if (func.empty()) throw Error("te: extern stage " + name + " has no function name");
  for (char c : func)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      throw Error("te: extern function name '" + func + "' is not a C identifier");
  for (const auto& a : args)
    if (!a || a->kind == tir::ExprKind::TensorRead || a->kind == tir::ExprKind::Reduce)
      throw Error("te: extern stage " + name + ": scalar arguments must be plain expressions");
  auto n = std::make_shared<OperationNode>();
  n->kind = OpKind::Extern;
  n->name = std::move(name);
  n->shape = std::move(shape);
  n->dtype = dtype;
  for (const auto& t : inputs) {
    if (!t.op()) throw Error("te: extern stage " + n->name + " has an undefined input");
    n->extern_inputs.push_back(t.op());
  }
  n->extern_func = std::move(func);
  n->extern_args = std::move(args);
  n->extern_stateful = stateful;
  return Tensor(n);
}
}  // namespace

Tensor extern_op(std::string name, Shape shape, DType dtype, std::vector<Tensor> inputs, std::string func,
                 std::vector<Expr> args) {
  return make_extern(std::move(name), std::move(shape), dtype, std::move(inputs), std::move(func), std::move(args), false);
}

Tensor stateful_extern_op(std::string name, Shape shape, DType dtype, std::vector<Tensor> inputs, std::string func,
                          std::vector<int64_t> attrs) {
  std::vector<Expr> args;
  for (int64_t a : attrs) args.push_back(tir::int_imm(a));
  return make_extern(std::move(name), std::move(shape), dtype, std::move(inputs), std::move(func), std::move(args), true);
}

}  // namespace sy::te
