#include "tir/hoist_guards.h"

#include "tir/arith.h"
#include "tir/functor.h"

namespace sy::tir {

namespace {

// Whether evaluating e ahead of where it stood is harmless: no reads, calls or integer division
// by anything but a positive constant.
bool movable(const Expr& e) {
  bool ok = true;
  visit_expr(e, [&](const Expr& x) {
    switch (x->kind) {
      case ExprKind::Load:
      case ExprKind::TensorRead:
      case ExprKind::Reduce:
      case ExprKind::Call: ok = false; break;
      case ExprKind::Div:
      case ExprKind::Mod: {
        int64_t c = 0;
        if (!is_float(x->dtype) && !(is_int_const(x->operands[1], &c) && c > 0)) ok = false;
        break;
      }
      default: break;
    }
  });
  return ok;
}

void and_terms(const Expr& e, std::vector<Expr>& out) {
  if (e->kind == ExprKind::And) {
    and_terms(e->operands[0], out);
    and_terms(e->operands[1], out);
  } else {
    out.push_back(e);
  }
}

Expr conjunction(const std::vector<Expr>& terms) {
  Expr c;
  for (const Expr& t : terms) c = c ? logical_and(c, t) : t;
  return c;
}

}  // namespace

Stmt hoist_guards(const Stmt& s) {
  if (!s) return s;
  Stmt r = map_stmt(s, [](const Stmt& c) { return hoist_guards(c); }, [](const Expr& e) { return e; });
  if (r->kind != StmtKind::For || r->for_kind == ForKind::Parallel) return r;
  const Stmt& body = r->body;
  if (!body || body->kind != StmtKind::IfThenElse || body->else_body) return r;
  std::vector<Expr> terms, inner, outer;
  and_terms(body->cond, terms);
  for (const Expr& t : terms) (!uses_var(t, r->var) && movable(t) ? outer : inner).push_back(t);
  if (outer.empty()) return r;
  Stmt then_body = inner.empty() ? body->body : if_then_else(conjunction(inner), body->body);
  return if_then_else(conjunction(outer), for_loop(r->var, r->min, r->extent, r->for_kind, then_body));
}

PrimFunc hoist_guards(PrimFunc f) {
  f.body = hoist_guards(f.body);
  return f;
}

}  // namespace sy::tir
