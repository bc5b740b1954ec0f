#include "tir/printer.h"

#include <cctype>
#include <cmath>
#include <sstream>

namespace sy::tir {

const std::string& NameTable::name(const void* node, const std::string& hint) {
  auto it = names_.find(node);
  if (it != names_.end()) return it->second;
  std::string base = hint.empty() ? "v" : hint;
  if (sanitize_) {
    for (char& c : base)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    if (std::isdigit(static_cast<unsigned char>(base[0])) || base.rfind("sy_", 0) == 0) base = std::string("v").append(base);
  }
  std::string n = base;
  for (int k = 1; taken_.count(n); ++k) n = base + "_" + std::to_string(k);
  taken_.insert(n);
  return names_[node] = n;
}

namespace {

int precedence(ExprKind k) {
  switch (k) {
    case ExprKind::Mul: case ExprKind::Div: case ExprKind::Mod: return 5;
    case ExprKind::Add: case ExprKind::Sub: return 4;
    case ExprKind::EQ: case ExprKind::NE: case ExprKind::LT: case ExprKind::LE:
    case ExprKind::GT: case ExprKind::GE: return 3;
    case ExprKind::And: return 2;
    case ExprKind::Or: return 1;
    default: return 10;
  }
}

std::string float_text(double v, DType t) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  std::ostringstream os;
  os.precision(t == DType::f32 ? 9 : 17);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return t == DType::f32 ? s + "f" : s;
}

class Printer {
 public:
  std::string expr(const Expr& e) {
    switch (e->kind) {
      case ExprKind::IntImm:
        if (e->dtype == kIndexType) return std::to_string(e->int_value);
        if (e->dtype == DType::boolean) return e->int_value ? "true" : "false";
        return std::string(dtype_name(e->dtype)) + "(" + std::to_string(e->int_value) + ")";
      case ExprKind::FloatImm: return float_text(e->float_value, e->dtype);
      case ExprKind::Var: return names.name(e.get(), e->name);
      case ExprKind::Min: case ExprKind::Max:
        return std::string(expr_kind_name(e->kind)) + "(" + list(e->operands) + ")";
      case ExprKind::Not: return std::string("!").append(wrap(e->operands[0], 9));
      case ExprKind::Select: return "select(" + list(e->operands) + ")";
      case ExprKind::Cast: return std::string(dtype_name(e->dtype)) + "(" + expr(e->operands[0]) + ")";
      case ExprKind::Call: return e->name + "(" + list(e->operands) + ")";
      case ExprKind::Load: return names.name(e->buffer.get(), e->buffer->name) + "[" + list(e->operands) + "]";
      case ExprKind::TensorRead: return e->producer->producer_name() + "(" + list(e->operands) + ")";
      case ExprKind::Reduce: {
        const char* k = e->reduce_kind == ReduceKind::Sum ? "sum" : e->reduce_kind == ReduceKind::Max ? "max" : "min";
        std::string axes;
        for (const auto& a : e->reduce_axes)
          axes += (axes.empty() ? "" : ", ") + expr(a.var) + ":" + std::to_string(a.extent);
        return std::string(k) + "(" + expr(e->operands[0]) + ", over [" + axes + "])";
      }
      default: {
        const int p = precedence(e->kind);
        std::string lhs = wrap(e->operands[0], p);  // sequenced: names are given in reading order
        return lhs + " " + expr_kind_name(e->kind) + " " + wrap(e->operands[1], p + 1);
      }
    }
  }

  void stmt(const Stmt& s, int indent) {
    const std::string pad(static_cast<size_t>(indent) * 2, ' ');
    switch (s->kind) {
      case StmtKind::For: {
        out << pad;
        if (s->for_kind != ForKind::Serial) out << for_kind_name(s->for_kind) << " ";
        int64_t mn = 0, ext = 0;
        out << "for " << expr(s->var) << " in ";
        if (is_int_const(s->min, &mn) && is_int_const(s->extent, &ext))
          out << "[" << mn << ", " << mn + ext << ")";
        else
          out << "[" << expr(s->min) << ", " << expr(s->min) << " + " << wrap(s->extent, 4) << ")";
        out << " {\n";
        stmt(s->body, indent + 1);
        out << pad << "}\n";
        break;
      }
      case StmtKind::Store:
        out << pad << names.name(s->buffer.get(), s->buffer->name) << "[" << list(s->indices)
            << "] = " << expr(s->value) << "\n";
        break;
      case StmtKind::Seq:
        for (const auto& c : s->seq) stmt(c, indent);
        break;
      case StmtKind::IfThenElse:
        out << pad << "if " << expr(s->cond) << " {\n";
        stmt(s->body, indent + 1);
        if (s->else_body) {
          out << pad << "} else {\n";
          stmt(s->else_body, indent + 1);
        }
        out << pad << "}\n";
        break;
      case StmtKind::LetStmt:
        out << pad << "let " << expr(s->var) << " = " << expr(s->value) << "\n";
        stmt(s->body, indent);
        break;
      case StmtKind::Allocate:
        out << pad << "allocate " << buffer_decl(s->buffer) << " {\n";
        stmt(s->body, indent + 1);
        out << pad << "}\n";
        break;
      case StmtKind::ExternCall: {
        out << pad << (s->stateful ? "call stateful " : "call ") << s->func << "(";
        bool first = true;
        for (const auto& b : s->buffers) {
          out << (first ? "" : ", ") << names.name(b.get(), b->name);
          first = false;
        }
        for (const auto& a : s->scalar_args) {
          out << (first ? "" : ", ") << expr(a);
          first = false;
        }
        out << ")\n";
        break;
      }
    }
  }

  std::string buffer_decl(const Buffer& b) {
    std::string s = names.name(b.get(), b->name) + ": " + std::string(dtype_name(b->dtype)) + "[";
    for (size_t i = 0; i < b->shape.size(); ++i) s += (i ? ", " : "") + std::to_string(b->shape[i]);
    return s + "]";
  }

  NameTable names;
  std::ostringstream out;

 private:
  std::string wrap(const Expr& e, int min_prec) {
    std::string s = expr(e);
    return precedence(e->kind) < min_prec ? "(" + s + ")" : s;
  }
  std::string list(const std::vector<Expr>& es) {
    std::string s;
    for (size_t i = 0; i < es.size(); ++i) s += (i ? ", " : "") + expr(es[i]);
    return s;
  }
};

}  // namespace

std::string print_expr(const Expr& e) { return Printer().expr(e); }

std::string print_stmt(const Stmt& s) {
  Printer p;
  p.stmt(s, 0);
  return p.out.str();
}

std::string print_func(const PrimFunc& f) {
  Printer p;
  p.out << "func " << f.name << "(";
  for (size_t i = 0; i < f.params.size(); ++i) p.out << (i ? ", " : "") << p.buffer_decl(f.params[i]);
  p.out << ") {\n";
  p.stmt(f.body, 1);
  p.out << "}\n";
  return p.out.str();
}

}  // namespace sy::tir
