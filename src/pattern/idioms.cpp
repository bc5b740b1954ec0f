#include "pattern/idioms.h"

#include <cmath>

namespace sy::pattern {

namespace {

const ir::CallNode* as_op(const ir::Expr& e, ir::OpCode op) {
  auto* c = e->as<ir::CallNode>();
  return c && c->is_op() && c->op == op ? c : nullptr;
}

bool scalar(const ir::Expr& e, float* v) {
  auto* k = e->as<ir::ConstantNode>();
  if (!k || k->value.numel() != 1 || k->value.dtype() != DType::f32) return false;
  *v = k->value.data<float>()[0];
  return true;
}

}  // namespace

Pattern erf_gelu() {
  using ir::OpCode;
  Pattern x = wildcard();
  Pattern e = op(OpCode::Erf, {op(OpCode::Div, {x, constant()})});
  Pattern inner = alt({op(OpCode::Add, {e, constant()}), op(OpCode::Add, {constant(), e})});
  Pattern m1 = alt({op(OpCode::Mul, {x, inner}), op(OpCode::Mul, {inner, x})});
  Pattern half_x = alt({op(OpCode::Mul, {x, constant()}), op(OpCode::Mul, {constant(), x})});
  return alt({op(OpCode::Mul, {m1, constant()}), op(OpCode::Mul, {constant(), m1}), op(OpCode::Mul, {half_x, inner}),
              op(OpCode::Mul, {inner, half_x})});
}

std::string check_erf_gelu(const Match& m, ir::Expr* x_out) {
  using ir::OpCode;
  const ir::CallNode* div = nullptr;
  for (const ir::Expr& n : m.nodes)
    if (auto* d = as_op(n, OpCode::Div)) div = d;
  if (!div) return "no division";
  const ir::Expr& x = div->args[0];
  float v;
  if (!scalar(div->args[1], &v) || std::abs(v - 1.41421356f) > 1e-5f) return "the divisor is not sqrt(2)";
  int halves = 0;
  for (const ir::Expr& n : m.nodes) {
    auto* c = n->as<ir::CallNode>();
    if (!c || !c->is_op() || (c->op != OpCode::Add && c->op != OpCode::Mul)) continue;
    for (const ir::Expr& a : c->args) {
      if (a->kind != ir::ExprKind::Constant) {  // x, or a step of the chain
        if (a != x && !as_op(a, OpCode::Add) && !as_op(a, OpCode::Mul) && !as_op(a, OpCode::Erf))
          return "reads a value other than the erf's input";
        continue;
      }
      if (!scalar(a, &v)) return "a constant that is not a float32 scalar";
      if (c->op == OpCode::Add && v != 1.0f) return "erf(..) + c with c != 1";
      if (c->op == OpCode::Mul && v != 0.5f) return "a factor other than 0.5";
      halves += c->op == OpCode::Mul;
    }
  }
  if (halves != 1) return "not one factor of 0.5";
  if (ir::dtype_of(x) != DType::f32) return "float32 only";
  if (x_out) *x_out = x;
  return "";
}

const ir::Expr* silu_operand(const ir::CallNode& c) {
  if (!c.is_op() || c.op != ir::OpCode::Mul || c.args.size() != 2) return nullptr;
  for (size_t k = 0; k < 2; ++k) {
    const ir::CallNode* s = as_op(c.args[1 - k], ir::OpCode::Sigmoid);
    if (s && s->args.size() == 1 && s->args[0].get() == c.args[k].get()) return &c.args[k];
  }
  return nullptr;
}

Pattern silu(const Pattern& x, const std::string& why) {
  CallCheck same_x{[why](const ir::CallNode& c) { return silu_operand(c) ? "" : why; }, "x * sigmoid(x)"};
  return alt({op(ir::OpCode::Mul, {x, op(ir::OpCode::Sigmoid, {x})}, same_x),
              op(ir::OpCode::Mul, {op(ir::OpCode::Sigmoid, {x}), x}, same_x)});
}

}  // namespace sy::pattern
