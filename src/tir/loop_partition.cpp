#include "tir/loop_partition.h"

#include <algorithm>

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
  int64_t split = 0;    // the condition holds for loop values in [min, split), or in [split, end) if suffix
  bool suffix = false;
};

// Whether c tests v modulo a period shorter than the loop: a guard such as a pad's row test on a
// loop that fuses channels with rows ((v % 16) >= 1) holds on one period at a time, so peeling
// it off piece by piece never ends in a guard-free loop. It only multiplied the loop, until the
// statement budget ran out: 18 copies of a parallel pad loop in one ResNet-50 kernel, each its
// own fork and join of the threads for 14 rows of work.
bool periodic_in(const Expr& c, const Expr& v, int64_t ext) {
  bool periodic = false;
  visit_expr(c, [&](const Expr& e) {
    int64_t m = 0;
    if (e->kind == ExprKind::Mod && is_int_const(e->operands[1], &m) && m < ext && uses_var(e->operands[0], v))
      periodic = true;
  });
  return periodic;
}

// Whether conjunct c of a guard holds on a proper, non-empty prefix or suffix of [mn, mn + ext)
// of loop variable v (the inner loops' variables ranged by `inner`).
bool split_point(const Expr& c, const Expr& v, int64_t mn, int64_t ext, const RangeMap& inner, Candidate* out) {
  if (!uses_var(c, v) || periodic_in(c, v, ext)) return false;
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
    *out = {lo + 1, false};
    return true;
  }
  if (!holds(end, end)) return false;
  int64_t lo = mn, hi = end;  // holds on [hi, end], not on [lo, end]
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (holds(mid, end) ? hi : lo) = mid;
  }
  *out = {hi, true};
  return true;
}

// The constant range of a For, if it has one (added to the ranges of the statements in its body).
bool loop_range(const Stmt& s, Interval* r) {
  int64_t a = 0, n = 0;
  if (!is_int_const(s->min, &a) || !is_int_const(s->extent, &n) || n <= 0) return false;
  *r = {int_imm(a), int_imm(a + n - 1)};
  return true;
}

// Finds a guard conjunct in body (an if without else, or the condition of a select in a stored
// value, such as a pad's "inside the input" test) that holds on a proper prefix or suffix of the loop.
bool find_candidate(const Stmt& s, const Expr& v, int64_t mn, int64_t ext, RangeMap& inner, Candidate* out) {
  if (!s) return false;
  if (s->kind == StmtKind::For) {
    Interval r;
    const bool ranged = loop_range(s, &r);
    if (ranged) inner[s->var.get()] = r;
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

// Rewrites a condition: each conjunct that mentions v and is proved under `ranges` (v ranged over
// one piece, each enclosing inner loop over its own range) becomes true. Nodes are shared between
// places (one select may sit in loops with other ranges), so each place is proved on its own.
Expr drop_proved(const Expr& cond, const Expr& v, const RangeMap& ranges) {
  std::vector<Expr> cs;
  conjuncts(cond, cs);
  bool changed = false;
  for (Expr& c : cs)
    if (uses_var(c, v) && can_prove(c, ranges)) {
      c = int_imm(1, DType::boolean);
      changed = true;
    }
  if (!changed) return cond;
  Expr r = cs[0];
  for (size_t i = 1; i < cs.size(); ++i) r = logical_and(r, cs[i]);
  return r;
}

Expr drop_proved_in_selects(const Expr& e, const Expr& v, const RangeMap& ranges) {
  return mutate_expr(e, [&](const Expr& y) {
    if (y->kind != ExprKind::Select) return y;
    Expr c = drop_proved(y->operands[0], v, ranges);
    return c == y->operands[0] ? y : with_operands(y, {c, y->operands[1], y->operands[2]});
  });
}

// The body of one piece of the loop over v: guards and select conditions proved true for every
// value of v in the piece (ranges[v]) under the ranges of the loops around each of them are dropped.
Stmt specialize(const Stmt& s, const Expr& v, RangeMap& ranges) {
  if (!s) return s;
  if (s->kind == StmtKind::For) {
    Interval r;
    const bool ranged = loop_range(s, &r);
    if (ranged) ranges[s->var.get()] = r;
    Stmt out = map_stmt(
        s, [&](const Stmt& c) { return specialize(c, v, ranges); }, [](const Expr& e) { return e; });
    if (ranged) ranges.erase(s->var.get());
    return out;
  }
  if (s->kind == StmtKind::IfThenElse) {
    Stmt then_body = specialize(s->body, v, ranges);
    Stmt else_body = specialize(s->else_body, v, ranges);
    Expr cond = drop_proved(s->cond, v, ranges);
    if (cond == s->cond && then_body == s->body && else_body == s->else_body) return s;
    return if_then_else(cond, then_body, else_body);
  }
  if (s->kind == StmtKind::Store)
    return map_stmt(
        s, [](const Stmt& c) { return c; }, [&](const Expr& e) { return drop_proved_in_selects(e, v, ranges); });
  return map_stmt(
      s, [&](const Stmt& c) { return specialize(c, v, ranges); }, [](const Expr& e) { return e; });
}

}  // namespace

int64_t stmt_count(const Stmt& s) {
  int64_t n = 0;
  visit_stmt(s, [&](const Stmt&) { ++n; });
  return n;
}

// Partitioning copies a loop's body once per piece, and pieces nest: on a 3-wide padded plane
// every column is a border piece, and a grouped conv grew from 14 statements to 4,000 (GCC then
// needed minutes). Kernels of real models grow at most ~6x (ResNet-50, MobileNetV2: <= 180
// statements); a function may grow to 8x its size as lowered, and to at least 256 statements.
int64_t partition_limit(const Stmt& lowered) {
  const int64_t n = stmt_count(lowered);
  return std::max<int64_t>(256, 8 * n);
}

namespace {

class Partitioner {
 public:
  explicit Partitioner(int64_t budget) : budget_(budget) {}

  Stmt run(const Stmt& s) {
    if (!s) return s;
    return partition_loop(map_stmt(s, [this](const Stmt& c) { return run(c); }, [](const Expr& e) { return e; }));
  }

 private:
  // Partitions loop r itself (its body already was), then each piece again at this level: a
  // concatenation's chain of selects becomes one loop per input.
  Stmt partition_loop(const Stmt& r) {
    if (!r || r->kind != StmtKind::For) return r;
    int64_t mn = 0, ext = 0;
    if (!is_int_const(r->min, &mn) || !is_int_const(r->extent, &ext) || ext < 2) return r;
    RangeMap inner;
    Candidate c;
    if (!find_candidate(r->body, r->var, mn, ext, inner, &c)) return r;
    const int64_t cost = stmt_count(r->body) + 1;  // one more copy of the body
    if (cost > budget_) return r;
    budget_ -= cost;
    // The piece where the guard holds drops every condition proved there; the rest keeps the body
    // as it was. Each piece is partitioned again (a pad's guard holds on a middle range: a suffix,
    // then a prefix of it); the ranges shrink, so this ends.
    const int64_t first = c.suffix ? c.split : mn, last = c.suffix ? mn + ext - 1 : c.split - 1;
    RangeMap ranges{{r->var.get(), {int_imm(first), int_imm(last)}}};
    Stmt proved = for_loop(r->var, int_imm(first), int_imm(last - first + 1), r->for_kind,
                           specialize(r->body, r->var, ranges));
    Stmt rest = c.suffix ? for_loop(r->var, int_imm(mn), int_imm(c.split - mn), r->for_kind, r->body)
                         : for_loop(r->var, int_imm(c.split), int_imm(mn + ext - c.split), r->for_kind, r->body);
    if (c.suffix) return seq({partition_loop(rest), partition_loop(proved)});
    return seq({partition_loop(proved), partition_loop(rest)});
  }

  int64_t budget_;
};

}  // namespace

Stmt loop_partition(const Stmt& s, int64_t max_statements) {
  if (max_statements < 0) max_statements = partition_limit(s);
  return Partitioner(max_statements - stmt_count(s)).run(s);
}

namespace {
void flatten_into(const Stmt& s, std::vector<Stmt>& out) {
  if (s && s->kind == StmtKind::Seq) {
    for (const auto& c : s->seq) flatten_into(c, out);
  } else if (s) {
    out.push_back(s);
  }
}
}  // namespace

std::vector<Stmt> flat_sequence(const Stmt& s) {
  std::vector<Stmt> out;
  flatten_into(s, out);
  return out;
}

bool continues_parallel_loop(const Stmt& a, const Stmt& b) {
  auto parallel = [](const Stmt& x) { return x && x->kind == StmtKind::For && x->for_kind == ForKind::Parallel; };
  int64_t a_min = 0, a_ext = 0, b_min = 0;
  return parallel(a) && parallel(b) && a->var == b->var && is_int_const(a->min, &a_min) &&
         is_int_const(a->extent, &a_ext) && is_int_const(b->min, &b_min) && b_min == a_min + a_ext;
}

PrimFunc loop_partition(PrimFunc f, int64_t max_statements) {
  f.body = loop_partition(f.body, max_statements);
  return f;
}

}  // namespace sy::tir
