#include "tir/vectorize.h"

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

int64_t stmt_count(const Stmt& s) {
  int64_t n = 0;
  visit_stmt(s, [&](const Stmt& x) { n += x->kind != StmtKind::Seq; });
  return n;
}

}  // namespace

Stmt legalize_vectorize(const Stmt& s) {
  if (!s) return s;
  Stmt r = map_stmt(s, [](const Stmt& c) { return legalize_vectorize(c); }, [](const Expr& e) { return e; });
  if (r->kind == StmtKind::For && r->for_kind == ForKind::Vectorized &&
      (!is_int_const(r->extent) || !vectorizable_body(r->body, r->var)))
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
