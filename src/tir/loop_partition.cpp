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
  int64_t split = 0;    // the condition holds for loop values in [min, split), or in [split, end) if suffix
  bool suffix = false;
};

// Whether conjunct c of a guard holds on a proper, non-empty prefix or suffix of [mn, mn + ext)
// of loop variable v (the inner loops' variables ranged by `inner`).
bool split_point(const Expr& c, const Expr& v, int64_t mn, int64_t ext, const RangeMap& inner, Candidate* out) {
  if (!uses_var(c, v)) return false;
  auto holds = [&](int64_t first, int64_t last) {
    RangeMap r = inner;
    r[v.get()] = {int_imm(first), int_imm(last)};
    return can_prove(c, r);
  };
  const int64_t end = mn + ext - 1;
  if (holds(mn, mn)) {
    if (holds(mn, end)) return false;  // always true: simplify's business
    int64_t lo = mn, hi = end;         // holds on [mn, lo], not on [mn, hi]
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      (holds(mn, mid) ? lo : hi) = mid;
    }
    *out = {c, lo + 1, false};
    return true;
  }
  if (!holds(end, end)) return false;
  int64_t lo = mn, hi = end;  // holds on [hi, end], not on [lo, end]
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (holds(mid, end) ? hi : lo) = mid;
  }
  *out = {c, hi, true};
  return true;
}

// Finds a guard conjunct in body (an if without else, or the condition of a select in a stored
// value, such as a pad's "inside the input" test) that holds on a proper prefix or suffix of the loop.
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
    for (const auto& c : cs)
      if (split_point(c, v, mn, ext, inner, out)) return true;
  }
  if (s->kind == StmtKind::Store && s->value) {
    std::vector<Expr> cs;
    visit_expr(s->value, [&](const Expr& e) {
      if (e->kind == ExprKind::Select) conjuncts(e->operands[0], cs);
    });
    for (const auto& c : cs)
      if (split_point(c, v, mn, ext, inner, out)) return true;
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

// Partitions loop r itself (its body already was), then each piece again at this level: a
// concatenation's chain of selects becomes one loop per input.
Stmt partition_loop(const Stmt& r);

Stmt loop_partition(const Stmt& s) {
  if (!s) return s;
  return partition_loop(map_stmt(s, [](const Stmt& c) { return loop_partition(c); }, [](const Expr& e) { return e; }));
}

Stmt partition_loop(const Stmt& r) {
  if (!r) return r;
  if (r->kind != StmtKind::For) return r;
  int64_t mn = 0, ext = 0;
  if (!is_int_const(r->min, &mn) || !is_int_const(r->extent, &ext) || ext < 2) return r;
  RangeMap inner;
  Candidate c;
  if (!find_candidate(r->body, r->var, mn, ext, inner, &c)) return r;
  // The piece where the conjunct holds drops it; the rest keeps the body as it was. Each piece is
  // partitioned again (a pad's guard holds on a middle range: a suffix, then a prefix of it); the
  // ranges shrink, so this ends.
  Stmt holds = replace_conjunct(r->body, c.conjunct);
  if (c.suffix) {
    Stmt head = for_loop(r->var, int_imm(mn), int_imm(c.split - mn), r->for_kind, r->body);
    Stmt main = for_loop(r->var, int_imm(c.split), int_imm(mn + ext - c.split), r->for_kind, holds);
    return seq({partition_loop(head), partition_loop(main)});
  }
  Stmt main = for_loop(r->var, int_imm(mn), int_imm(c.split - mn), r->for_kind, holds);
  Stmt tail = for_loop(r->var, int_imm(c.split), int_imm(mn + ext - c.split), r->for_kind, r->body);
  return seq({partition_loop(main), partition_loop(tail)});
}

PrimFunc loop_partition(PrimFunc f) {
  f.body = loop_partition(f.body);
  return f;
}

}  // namespace sy::tir
