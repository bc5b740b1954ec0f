#include "tir/verifier.h"

#include <unordered_set>

#include "tir/printer.h"

namespace sy::tir {

namespace {

class Verifier {
 public:
  std::vector<std::string> errors;

  void func(const PrimFunc& f) {
    for (const auto& b : f.params) {
      if (!buffers_.insert(b.get()).second) errors.push_back("buffer " + b->name + " is a parameter twice");
    }
    stmt(f.body);
  }

 private:
  void expr(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Var:
        if (!vars_.count(e.get())) errors.push_back("variable " + e->name + " is used outside its scope");
        break;
      case ExprKind::Load:
        if (!buffers_.count(e->buffer.get())) errors.push_back("buffer " + e->buffer->name + " is loaded outside its scope");
        for (const auto& i : e->operands)
          if (!is_integer(i->dtype)) errors.push_back("non-integer index into " + e->buffer->name);
        break;
      case ExprKind::TensorRead:
      case ExprKind::Reduce:
        errors.push_back(std::string("a ") + expr_kind_name(e->kind) + " remains after lowering: " + print_expr(e));
        return;
      default: break;
    }
    for (const auto& o : e->operands) expr(o);
  }

  void bind(const Expr& v) {
    if (!vars_.insert(v.get()).second) errors.push_back("variable " + v->name + " is bound twice in one scope");
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::For: {
        expr(s->min);
        expr(s->extent);
        if (!is_integer(s->min->dtype) || !is_integer(s->extent->dtype))
          errors.push_back("loop " + s->var->name + " has a non-integer range");
        if (s->for_kind == ForKind::Vectorized && !is_int_const(s->extent))
          errors.push_back("vectorized loop " + s->var->name + " has a non-constant extent");
        if (s->for_kind == ForKind::Parallel && parallel_depth_ > 0)
          errors.push_back("parallel loop " + s->var->name + " is nested in a parallel loop");
        bind(s->var);
        parallel_depth_ += s->for_kind == ForKind::Parallel;
        stmt(s->body);
        parallel_depth_ -= s->for_kind == ForKind::Parallel;
        vars_.erase(s->var.get());
        break;
      }
      case StmtKind::LetStmt:
        expr(s->value);
        bind(s->var);
        stmt(s->body);
        vars_.erase(s->var.get());
        break;
      case StmtKind::Store:
        if (!buffers_.count(s->buffer.get())) errors.push_back("buffer " + s->buffer->name + " is stored outside its scope");
        for (const auto& i : s->indices) expr(i);
        expr(s->value);
        if (s->value->dtype != s->buffer->dtype) errors.push_back("store of the wrong dtype into " + s->buffer->name);
        break;
      case StmtKind::Allocate:
        if (!buffers_.insert(s->buffer.get()).second) errors.push_back("buffer " + s->buffer->name + " is allocated twice");
        stmt(s->body);
        buffers_.erase(s->buffer.get());
        break;
      case StmtKind::IfThenElse:
        expr(s->cond);
        stmt(s->body);
        stmt(s->else_body);
        break;
      case StmtKind::Seq:
        for (const auto& c : s->seq) stmt(c);
        break;
      case StmtKind::ExternCall:
        for (const auto& b : s->buffers)
          if (!buffers_.count(b.get())) errors.push_back("buffer " + b->name + " is passed to " + s->func + " outside its scope");
        for (const auto& a : s->scalar_args) expr(a);
        break;
    }
  }

  std::unordered_set<const void*> vars_, buffers_;
  int parallel_depth_ = 0;
};

}  // namespace

std::vector<std::string> verify(const PrimFunc& f) {
  Verifier v;
  v.func(f);
  return v.errors;
}

void check_valid(const PrimFunc& f) {
  auto errs = verify(f);
  if (errs.empty()) return;
  std::string msg = "invalid loop IR in " + f.name + ":";
  for (const auto& e : errs) msg += "\n  " + e;
  throw InternalError(msg + "\n" + print_func(f));
}

}  // namespace sy::tir
