#include "tir/vectorize.h"

#include "tir/arith.h"
#include "tir/functor.h"

namespace sy::tir {

namespace {

// No nested loops, allocations or calls, and every store moves with the loop variable (a store
// to one element on every iteration is a reduction: no SIMD loop without a reduction clause).
bool vectorizable_body(const Stmt& body, const Expr& v) {
  bool ok = true;
  visit_stmt(body, [&](const Stmt& s) {
    ok &= s->kind != StmtKind::For && s->kind != StmtKind::Allocate && s->kind != StmtKind::ExternCall;
    if (s->kind == StmtKind::Store) {
      bool moves = false;
      for (const auto& i : s->indices) moves |= uses_var(i, v);
      ok &= moves;
    }
  });
  return ok;
}

bool reads_buffer(const Expr& e, const Buffer& b) {
  bool found = false;
  visit_expr(e, [&](const Expr& x) { found |= x->kind == ExprKind::Load && x->buffer == b; });
  return found;
}

int64_t stmt_count(const Stmt& s) {
  int64_t n = 0;
  visit_stmt(s, [&](const Stmt& x) { n += x->kind != StmtKind::Seq; });
  return n;
}

}  // namespace

std::optional<VectorReduction> match_vector_reduction(const Stmt& loop) {
  if (!loop || loop->kind != StmtKind::For || !is_int_const(loop->extent)) return std::nullopt;
  VectorReduction r;
  Stmt body = loop->body;
  if (body->kind == StmtKind::IfThenElse && !body->else_body) {
    r.cond = body->cond;
    body = body->body;
  }
  if (body->kind != StmtKind::Store) return std::nullopt;
  const Buffer& b = body->buffer;
  for (const auto& i : body->indices)
    if (uses_var(i, loop->var) || reads_buffer(i, b)) return std::nullopt;
  if (r.cond && reads_buffer(r.cond, b)) return std::nullopt;
  const Expr& v = body->value;
  switch (v->kind) {
    case ExprKind::Add: r.kind = ReduceKind::Sum; break;
    case ExprKind::Max: r.kind = ReduceKind::Max; break;
    case ExprKind::Min: r.kind = ReduceKind::Min; break;
    default: return std::nullopt;
  }
  const Expr& acc = v->operands[0];
  if (acc->kind != ExprKind::Load || acc->buffer != b) return std::nullopt;
  for (size_t i = 0; i < body->indices.size(); ++i)
    if (!expr_equal(acc->operands[i], body->indices[i])) return std::nullopt;
  if (reads_buffer(v->operands[1], b)) return std::nullopt;
  r.store = body;
  r.operand = v->operands[1];
  return r;
}

Stmt legalize_vectorize(const Stmt& s) {
  if (!s) return s;
  Stmt r = map_stmt(s, [](const Stmt& c) { return legalize_vectorize(c); }, [](const Expr& e) { return e; });
  if (r->kind == StmtKind::For && r->for_kind == ForKind::Vectorized &&
      (!is_int_const(r->extent) || (!vectorizable_body(r->body, r->var) && !match_vector_reduction(r))))
    return for_loop(r->var, r->min, r->extent, ForKind::Serial, r->body);
  return r;
}

PrimFunc legalize_vectorize(PrimFunc f) {
  f.body = legalize_vectorize(f.body);
  return f;
}

Stmt unroll_loops(const Stmt& s, int64_t max_statements) {
  if (!s) return s;
  Stmt r = map_stmt(s, [&](const Stmt& c) { return unroll_loops(c, max_statements); }, [](const Expr& e) { return e; });
  int64_t n = 0;
  if (r->kind != StmtKind::For || r->for_kind != ForKind::Unrolled || !is_int_const(r->extent, &n)) return r;
  if (n * stmt_count(r->body) > max_statements) return r;
  std::vector<Stmt> copies;
  for (int64_t i = 0; i < n; ++i) copies.push_back(substitute(r->body, {{r->var.get(), r->min + int_imm(i)}}));
  return seq(std::move(copies));
}

PrimFunc unroll_loops(PrimFunc f, int64_t max_statements) {
  f.body = unroll_loops(f.body, max_statements);
  return f;
}

}  // namespace sy::tir
