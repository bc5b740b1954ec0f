#include "tir/remove_no_op.h"

#include "tir/arith.h"
#include "tir/functor.h"

namespace sy::tir {

namespace {

bool stmt_uses_var(const Stmt& s, const Expr& v) {
  bool used = false;
  visit_stmt(s, [](const Stmt&) {}, [&](const Expr& e) { used |= uses_var(e, v); });
  return used;
}

bool stmt_uses_buffer(const Stmt& s, const Buffer& b) {
  bool used = false;
  visit_stmt(
      s,
      [&](const Stmt& x) {
        used |= x->kind == StmtKind::Store && x->buffer == b;
        for (const auto& xb : x->buffers) used |= xb == b;
      },
      [&](const Expr& e) { visit_expr(e, [&](const Expr& y) { used |= y->kind == ExprKind::Load && y->buffer == b; }); });
  return used;
}

bool is_self_store(const Stmt& s) {
  const Expr& v = s->value;
  if (v->kind != ExprKind::Load || v->buffer != s->buffer) return false;
  for (size_t i = 0; i < s->indices.size(); ++i)
    if (!expr_equal(v->operands[i], s->indices[i])) return false;
  return true;
}

}  // namespace

Stmt remove_no_op(const Stmt& s) {
  if (!s) return s;
  Stmt r = map_stmt(s, [](const Stmt& c) { return remove_no_op(c); }, [](const Expr& e) { return e; });
  switch (r->kind) {
    case StmtKind::Store: return is_self_store(r) ? no_op() : r;
    case StmtKind::For: {
      int64_t n = 0;
      if (is_no_op(r->body) || (is_int_const(r->extent, &n) && n <= 0)) return no_op();
      return r;
    }
    case StmtKind::IfThenElse:
      if (is_no_op(r->body) && is_no_op(r->else_body)) return no_op();
      return r;
    case StmtKind::LetStmt:
      if (is_no_op(r->body)) return no_op();
      return stmt_uses_var(r->body, r->var) ? r : r->body;
    case StmtKind::Allocate:
      if (is_no_op(r->body)) return no_op();
      return stmt_uses_buffer(r->body, r->buffer) ? r : r->body;
    default: return r;
  }
}

PrimFunc remove_no_op(PrimFunc f) {
  f.body = remove_no_op(f.body);
  return f;
}

}  // namespace sy::tir
