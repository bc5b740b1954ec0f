#include "tir/functor.h"

namespace sy::tir {

Expr mutate_expr(const Expr& e, const ExprFn& post) {
  if (!e) return e;
  std::vector<Expr> ops;
  ops.reserve(e->operands.size());
  for (const auto& o : e->operands) ops.push_back(mutate_expr(o, post));
  return post(with_operands(e, std::move(ops)));
}

void visit_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  if (!e) return;
  f(e);
  for (const auto& o : e->operands) visit_expr(o, f);
}

Stmt map_stmt(const Stmt& s, const StmtFn& child, const ExprFn& expr) {
  if (!s) return s;
  bool changed = false;
  auto E = [&](const Expr& x) {
    if (!x) return x;
    Expr y = expr(x);
    changed |= y != x;
    return y;
  };
  auto S = [&](const Stmt& x) {
    if (!x) return x;
    Stmt y = child(x);
    changed |= y != x;
    return y;
  };
  auto n = std::make_shared<StmtNode>(*s);
  n->var = s->var;  // variables are binders, never rewritten here
  n->min = E(s->min);
  n->extent = E(s->extent);
  n->value = E(s->value);
  n->cond = E(s->cond);
  for (auto& i : n->indices) i = E(i);
  for (auto& a : n->scalar_args) a = E(a);
  n->body = S(s->body);
  n->else_body = S(s->else_body);
  for (auto& c : n->seq) c = S(c);
  if (!changed) return s;
  if (n->kind == StmtKind::Seq) return seq(n->seq);
  return n;
}

void visit_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f,
                const std::function<void(const Expr&)>& g) {
  if (!s) return;
  f(s);
  if (g) {
    for (const Expr* x : {&s->min, &s->extent, &s->value, &s->cond})
      if (*x) g(*x);
    for (const auto& i : s->indices) g(i);
    for (const auto& a : s->scalar_args) g(a);
  }
  visit_stmt(s->body, f, g);
  visit_stmt(s->else_body, f, g);
  for (const auto& c : s->seq) visit_stmt(c, f, g);
}

Expr substitute(const Expr& e, const VarMap& m) {
  if (m.empty()) return e;
  return mutate_expr(e, [&](const Expr& x) {
    if (x->kind == ExprKind::Var) {
      auto it = m.find(x.get());
      if (it != m.end()) return it->second;
    }
    return x;
  });
}

Stmt substitute(const Stmt& s, const VarMap& m) {
  if (m.empty()) return s;
  std::function<Stmt(const Stmt&)> rec = [&](const Stmt& x) {
    return map_stmt(x, rec, [&](const Expr& e) { return substitute(e, m); });
  };
  return rec(s);
}

bool uses_var(const Expr& e, const Expr& v) {
  bool found = false;
  visit_expr(e, [&](const Expr& x) { found |= x.get() == v.get(); });
  return found;
}

}  // namespace sy::tir
