// Generic traversal and rewriting of loop-IR expressions and statements, and variable substitution.
#pragma once
#include <functional>
#include <unordered_map>

#include "tir/stmt.h"

namespace sy::tir {

using ExprFn = std::function<Expr(const Expr&)>;
using StmtFn = std::function<Stmt(const Stmt&)>;
using VarMap = std::unordered_map<const ExprNode*, Expr>;

// Rewrites bottom-up: operands first, then post(node with rewritten operands). Unchanged
// subtrees are returned as is.
Expr mutate_expr(const Expr& e, const ExprFn& post);
// Calls f on e and every sub-expression, parents before children.
void visit_expr(const Expr& e, const std::function<void(const Expr&)>& f);

// Rebuilds s with each child statement replaced by child(c) and each expression field by expr(e)
// (one level only: the callbacks decide whether to recurse). Returns s if nothing changed.
Stmt map_stmt(const Stmt& s, const StmtFn& child, const ExprFn& expr);
// Calls f on s and every nested statement, parents first; g (if given) on every expression field.
void visit_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f,
                const std::function<void(const Expr&)>& g = nullptr);

// Replaces variables (keys are Var nodes) by expressions.
Expr substitute(const Expr& e, const VarMap& m);
Stmt substitute(const Stmt& s, const VarMap& m);

// Whether e mentions variable v.
bool uses_var(const Expr& e, const Expr& v);

}  // namespace sy::tir
