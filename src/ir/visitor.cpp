#include "ir/visitor.h"

#include <unordered_set>

namespace sy::ir {

std::vector<Expr> node_inputs(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Call: {
      auto* c = e->as<CallNode>();
      std::vector<Expr> v = c->args;
      if (c->callee) v.push_back(c->callee);
      return v;
    }
    case ExprKind::Tuple: return e->as<TupleNode>()->fields;
    case ExprKind::TupleGetItem: return {e->as<TupleGetItemNode>()->tuple};
    default: return {};
  }
}

std::vector<Expr> post_order(const Expr& root, bool into_functions) {
  std::vector<Expr> order;
  std::unordered_set<const ExprNode*> done;
  // Iterative DFS: graphs of real models are deep (thousands of nodes in a chain).
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    stack.pop_back();
    if (done.count(e.get())) continue;
    if (expanded) {
      done.insert(e.get());
      order.push_back(e);
      continue;
    }
    stack.emplace_back(e, true);
    std::vector<Expr> ins = node_inputs(e);
    if (into_functions && e->kind == ExprKind::Function) ins.push_back(e->as<FunctionNode>()->body);
    for (auto it = ins.rbegin(); it != ins.rend(); ++it)
      if (!done.count(it->get())) stack.emplace_back(*it, false);
  }
  return order;
}

void ExprVisitor::visit(const Expr& root) {
  for (const Expr& e : post_order(root)) {
    if (seen_[e.get()]) continue;
    seen_[e.get()] = true;
    switch (e->kind) {
      case ExprKind::Var: visit_var(e->as<VarNode>()); break;
      case ExprKind::Constant: visit_constant(e->as<ConstantNode>()); break;
      case ExprKind::GlobalVar: visit_global_var(e->as<GlobalVarNode>()); break;
      case ExprKind::Call: visit_call(e->as<CallNode>()); break;
      case ExprKind::Tuple: visit_tuple(e->as<TupleNode>()); break;
      case ExprKind::TupleGetItem: visit_tuple_get_item(e->as<TupleGetItemNode>()); break;
      case ExprKind::Function: visit_function(e->as<FunctionNode>()); break;
    }
  }
}

Expr ExprMutator::mutate(const Expr& root) {
  for (const Expr& e : post_order(root)) {
    if (memo_.count(e.get())) continue;
    auto get = [&](const Expr& x) { return memo_.at(x.get()); };
    Expr out;
    switch (e->kind) {
      case ExprKind::Var: out = rewrite_var(e); break;
      case ExprKind::Constant: out = rewrite_constant(e); break;
      case ExprKind::GlobalVar: out = rewrite_global_var(e); break;
      case ExprKind::Call: {
        auto* c = e->as<CallNode>();
        std::vector<Expr> args;
        for (auto& a : c->args) args.push_back(get(a));
        out = rewrite_call(e, c, std::move(args), c->callee ? get(c->callee) : nullptr);
        break;
      }
      case ExprKind::Tuple: {
        auto* t = e->as<TupleNode>();
        std::vector<Expr> fs;
        for (auto& f : t->fields) fs.push_back(get(f));
        out = rewrite_tuple(e, t, std::move(fs));
        break;
      }
      case ExprKind::TupleGetItem: {
        auto* t = e->as<TupleGetItemNode>();
        out = rewrite_tuple_get_item(e, t, get(t->tuple));
        break;
      }
      case ExprKind::Function: {
        auto* f = e->as<FunctionNode>();
        out = rewrite_function(e, f, mutate(f->body));
        break;
      }
    }
    memo_[e.get()] = out;
  }
  return memo_.at(root.get());
}

Expr ExprMutator::rewrite_call(const Expr& orig, const CallNode* c, std::vector<Expr> args, Expr callee) {
  bool same = callee == c->callee;
  for (size_t i = 0; same && i < args.size(); ++i) same = args[i] == c->args[i];
  if (same) return orig;
  if (c->is_op()) return call(c->op, std::move(args), c->attrs);
  return call_function(std::move(callee), std::move(args));
}

Expr ExprMutator::rewrite_tuple(const Expr& orig, const TupleNode* t, std::vector<Expr> fs) {
  bool same = true;
  for (size_t i = 0; same && i < fs.size(); ++i) same = fs[i] == t->fields[i];
  return same ? orig : tuple(std::move(fs));
}

Expr ExprMutator::rewrite_tuple_get_item(const Expr& orig, const TupleGetItemNode* t, Expr nt) {
  return nt == t->tuple ? orig : tuple_get_item(std::move(nt), t->index);
}

Expr ExprMutator::rewrite_function(const Expr& orig, const FunctionNode* f, Expr body) {
  return body == f->body ? orig : function(f->params, std::move(body), f->attrs);
}

}  // namespace sy::ir
