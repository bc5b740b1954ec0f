#include "tir/loop_partition.h"

#include "tir/arith.h"
#include "tir/functor.h"

namespace sy::tir {

namespace {

void conjuncts(const Expr& c, std::vector<Expr>& out) {
  if (c->kind == ExprKind::And) {
    conjuncts(c->operands[0], out);
    conjuncts(c->operands[1], out);
  } else {
    out.push_back(c);
  }
}

struct Candidate {
  Expr conjunct;
  int64_t split = 0;  // the condition holds for loop values in [min, split)
};

// Finds a guard conjunct in body that holds on a proper, non-empty prefix of [mn, mn + ext).
bool find_candidate(const Stmt& s, const Expr& v, int64_t mn, int64_t ext, RangeMap& inner, Candidate* out) {
  if (!s) return false;
  if (s->kind == StmtKind::For) {
    int64_t a = 0, n = 0;
    const bool ranged = is_int_const(s->min, &a) && is_int_const(s->extent, &n) && n > 0;
    if (ranged) inner[s->var.get()] = {int_imm(a), int_imm(a + n - 1)};
    bool found = find_candidate(s->body, v, mn, ext, inner, out);
    if (ranged) inner.erase(s->var.get());
    return found;
  }
  if (s->kind == StmtKind::IfThenElse && !s->else_body) {
    std::vector<Expr> cs;
    conjuncts(s->cond, cs);
    for (const auto& c : cs) {
      if (!uses_var(c, v)) continue;
      auto holds_upto = [&](int64_t last) {
        RangeMap r = inner;
        r[v.get()] = {int_imm(mn), int_imm(last)};
        return can_prove(c, r);
      };
      if (!holds_upto(mn)) continue;
      int64_t lo = mn, hi = mn + ext - 1;  // holds up to lo; find the largest such
      if (holds_upto(hi)) continue;        // always true: simplify's business
      while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        (holds_upto(mid) ? lo : hi) = mid;
      }
      *out = {c, lo + 1};
      return true;
    }
  }
  if (s->kind == StmtKind::IfThenElse || s->kind == StmtKind::LetStmt || s->kind == StmtKind::Allocate)
    if (find_candidate(s->body, v, mn, ext, inner, out)) return true;
  if (s->kind == StmtKind::IfThenElse && find_candidate(s->else_body, v, mn, ext, inner, out)) return true;
  for (const auto& c : s->seq)
    if (find_candidate(c, v, mn, ext, inner, out)) return true;
  return false;
}

Stmt replace_conjunct(const Stmt& s, const Expr& conjunct) {
  std::function<Stmt(const Stmt&)> rec = [&](const Stmt& x) {
    return map_stmt(x, rec, [&](const Expr& e) {
      return mutate_expr(e, [&](const Expr& y) { return y == conjunct ? int_imm(1, DType::boolean) : y; });
    });
  };
  return rec(s);
}

}  // namespace

Stmt loop_partition(const Stmt& s) {
  if (!s) return s;
  Stmt r = map_stmt(s, [](const Stmt& c) { return loop_partition(c); }, [](const Expr& e) { return e; });
  if (r->kind != StmtKind::For) return r;
  int64_t mn = 0, ext = 0;
  if (!is_int_const(r->min, &mn) || !is_int_const(r->extent, &ext) || ext < 2) return r;
  RangeMap inner;
  Candidate c;
  if (!find_candidate(r->body, r->var, mn, ext, inner, &c)) return r;
  Stmt main = for_loop(r->var, int_imm(mn), int_imm(c.split - mn), r->for_kind, replace_conjunct(r->body, c.conjunct));
  Stmt tail = for_loop(r->var, int_imm(c.split), int_imm(mn + ext - c.split), r->for_kind, r->body);
  return seq({main, tail});
}

PrimFunc loop_partition(PrimFunc f) {
  f.body = loop_partition(f.body);
  return f;
}

}  // namespace sy::tir
