#include "tir/expr.h"

#include <cmath>
#include <limits>

namespace sy::tir {

namespace {

std::shared_ptr<ExprNode> make(ExprKind k, DType t, std::vector<Expr> ops = {}) {
  auto n = std::make_shared<ExprNode>(k, t);
  n->operands = std::move(ops);
  return n;
}

void check_defined(const Expr& e, const char* what) {
  if (!e) throw Error(std::string("tir: undefined operand of ") + what);
}

}  // namespace

Buffer buffer(std::string name, DType dtype, Shape shape) {
  return std::make_shared<const BufferNode>(std::move(name), dtype, std::move(shape));
}

Expr int_imm(int64_t v, DType t) {
  auto n = make(ExprKind::IntImm, t);
  n->int_value = v;
  return n;
}

Expr float_imm(double v, DType t) {
  auto n = make(ExprKind::FloatImm, t);
  n->float_value = v;
  return n;
}

Expr const_of(DType t, double v) {
  if (is_float(t)) return float_imm(v, t);
  if (t == DType::boolean) return int_imm(v != 0 ? 1 : 0, t);
  return int_imm(static_cast<int64_t>(v), t);
}

Expr var(std::string name, DType t) {
  auto n = make(ExprKind::Var, t);
  n->name = std::move(name);
  return n;
}

bool is_comparison(ExprKind k) {
  return k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE ||
         k == ExprKind::GT || k == ExprKind::GE;
}

Expr binary(ExprKind k, Expr a, Expr b) {
  check_defined(a, expr_kind_name(k));
  check_defined(b, expr_kind_name(k));
  if (a->dtype != b->dtype)
    throw Error(std::string("tir: operands of ") + expr_kind_name(k) + " have different dtypes (" +
                std::string(dtype_name(a->dtype)) + " and " + std::string(dtype_name(b->dtype)) + ")");
  DType t = a->dtype;
  if (is_comparison(k)) t = DType::boolean;
  if ((k == ExprKind::And || k == ExprKind::Or) && a->dtype != DType::boolean)
    throw Error(std::string("tir: operands of ") + expr_kind_name(k) + " must be bool");
  return make(k, t, {std::move(a), std::move(b)});
}

Expr min(Expr a, Expr b) { return binary(ExprKind::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(ExprKind::Max, std::move(a), std::move(b)); }

Expr select(Expr cond, Expr t, Expr f) {
  check_defined(cond, "select");
  check_defined(t, "select");
  check_defined(f, "select");
  if (cond->dtype != DType::boolean) throw Error("tir: select condition must be bool");
  if (t->dtype != f->dtype) throw Error("tir: select branches have different dtypes");
  DType dt = t->dtype;
  return make(ExprKind::Select, dt, {std::move(cond), std::move(t), std::move(f)});
}

Expr cast(DType t, Expr v) {
  check_defined(v, "cast");
  if (v->dtype == t) return v;
  return make(ExprKind::Cast, t, {std::move(v)});
}

Expr logical_not(Expr a) {
  check_defined(a, "not");
  if (a->dtype != DType::boolean) throw Error("tir: operand of not must be bool");
  return make(ExprKind::Not, DType::boolean, {std::move(a)});
}

Expr call(std::string name, DType t, std::vector<Expr> args) {
  for (auto& a : args) check_defined(a, "call");
  auto n = make(ExprKind::Call, t, std::move(args));
  n->name = std::move(name);
  return n;
}

Expr load(Buffer b, std::vector<Expr> indices) {
  SY_CHECK(b) << "load from a null buffer";
  if (indices.size() != b->shape.size())
    throw Error("tir: load from " + b->name + " with " + std::to_string(indices.size()) +
                " indices, buffer has rank " + std::to_string(b->shape.size()));
  for (auto& i : indices) check_defined(i, "load");
  auto n = make(ExprKind::Load, b->dtype, std::move(indices));
  n->buffer = std::move(b);
  return n;
}

Expr tensor_read(Producer p, std::vector<Expr> indices) {
  SY_CHECK(p) << "read of a null producer";
  if (indices.size() != p->producer_shape().size())
    throw Error("te: " + p->producer_name() + " indexed with " + std::to_string(indices.size()) +
                " indices, tensor has rank " + std::to_string(p->producer_shape().size()));
  for (auto& i : indices) {
    check_defined(i, "tensor read");
    if (!is_integer(i->dtype))
      throw Error("te: " + p->producer_name() + " indexed with a " + std::string(dtype_name(i->dtype)) +
                  " expression");
    i = cast(kIndexType, i);
  }
  auto n = make(ExprKind::TensorRead, p->producer_dtype(), std::move(indices));
  n->producer = std::move(p);
  return n;
}

Expr reduce(ReduceKind k, Expr source, std::vector<IterVar> axes) {
  check_defined(source, "reduce");
  if (axes.empty()) throw Error("te: a reduction needs at least one reduce axis");
  const DType t = source->dtype;
  auto n = make(ExprKind::Reduce, t, {std::move(source)});
  n->reduce_kind = k;
  n->reduce_axes = std::move(axes);
  return n;
}

Expr reduce_identity(ReduceKind k, DType t) {
  switch (k) {
    case ReduceKind::Sum: return const_of(t, 0);
    case ReduceKind::Max:
    case ReduceKind::Min: {
      const bool mx = k == ReduceKind::Max;
      if (is_float(t)) return float_imm(mx ? -std::numeric_limits<double>::infinity()
                                           : std::numeric_limits<double>::infinity(), t);
      int64_t lo = 0, hi = 0;
      dispatch_dtype(t, [&](auto v) {
        using T = decltype(v);
        lo = static_cast<int64_t>(std::numeric_limits<T>::lowest());
        hi = static_cast<int64_t>(std::numeric_limits<T>::max());
      });
      return int_imm(mx ? lo : hi, t);
    }
  }
  return const_of(t, 0);
}

Expr with_operands(const Expr& e, std::vector<Expr> operands) {
  bool same = operands.size() == e->operands.size();
  for (size_t i = 0; same && i < operands.size(); ++i) same = operands[i] == e->operands[i];
  if (same) return e;
  auto n = std::make_shared<ExprNode>(*e);
  n->operands = std::move(operands);
  return n;
}

bool is_int_const(const Expr& e, int64_t* value) {
  if (!e || e->kind != ExprKind::IntImm) return false;
  if (value) *value = e->int_value;
  return true;
}

const char* expr_kind_name(ExprKind k) {
  switch (k) {
    case ExprKind::IntImm: return "int";
    case ExprKind::FloatImm: return "float";
    case ExprKind::Var: return "var";
    case ExprKind::Add: return "+";
    case ExprKind::Sub: return "-";
    case ExprKind::Mul: return "*";
    case ExprKind::Div: return "/";
    case ExprKind::Mod: return "%";
    case ExprKind::Min: return "min";
    case ExprKind::Max: return "max";
    case ExprKind::EQ: return "==";
    case ExprKind::NE: return "!=";
    case ExprKind::LT: return "<";
    case ExprKind::LE: return "<=";
    case ExprKind::GT: return ">";
    case ExprKind::GE: return ">=";
    case ExprKind::And: return "&&";
    case ExprKind::Or: return "||";
    case ExprKind::Not: return "!";
    case ExprKind::Select: return "select";
    case ExprKind::Cast: return "cast";
    case ExprKind::Call: return "call";
    case ExprKind::Load: return "load";
    case ExprKind::TensorRead: return "tensor read";
    case ExprKind::Reduce: return "reduce";
  }
  return "?";
}

Expr operator+(Expr a, Expr b) { return binary(ExprKind::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return binary(ExprKind::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return binary(ExprKind::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return binary(ExprKind::Div, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return binary(ExprKind::Mod, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return binary(ExprKind::LT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return binary(ExprKind::LE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return binary(ExprKind::GT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return binary(ExprKind::GE, std::move(a), std::move(b)); }
Expr operator-(Expr a) { return const_of(a->dtype, 0) - a; }
Expr eq(Expr a, Expr b) { return binary(ExprKind::EQ, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return binary(ExprKind::NE, std::move(a), std::move(b)); }
Expr logical_and(Expr a, Expr b) { return binary(ExprKind::And, std::move(a), std::move(b)); }
Expr logical_or(Expr a, Expr b) { return binary(ExprKind::Or, std::move(a), std::move(b)); }

namespace {
Expr float_call(const char* name, Expr x) {
  check_defined(x, name);
  if (!is_float(x->dtype)) throw Error(std::string("tir: ") + name + " needs a float operand");
  DType t = x->dtype;
  return call(name, t, {std::move(x)});
}
}  // namespace

Expr exp(Expr x) { return float_call("exp", std::move(x)); }
Expr log(Expr x) { return float_call("log", std::move(x)); }
Expr sqrt(Expr x) { return float_call("sqrt", std::move(x)); }
Expr tanh(Expr x) { return float_call("tanh", std::move(x)); }
Expr abs(Expr x) {
  check_defined(x, "abs");
  DType t = x->dtype;
  return call("abs", t, {std::move(x)});
}

}  // namespace sy::tir
