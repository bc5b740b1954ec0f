// Post-order traversal and rewriting of dataflow graphs. Shared nodes are visited once.
#pragma once
#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace sy::ir {

// Nodes reachable from root, each once, every node after its inputs (topological order).
// Does not descend into the bodies of FunctionNodes used as callees unless into_functions.
std::vector<Expr> post_order(const Expr& root, bool into_functions = false);

// Direct inputs of a node (args, fields, tuple; a function-callee's node is included).
std::vector<Expr> node_inputs(const Expr& e);

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  // Visits every node reachable from e once, inputs first.
  void visit(const Expr& e);

 protected:
  virtual void visit_var(const VarNode*) {}
  virtual void visit_constant(const ConstantNode*) {}
  virtual void visit_global_var(const GlobalVarNode*) {}
  virtual void visit_call(const CallNode*) {}
  virtual void visit_tuple(const TupleNode*) {}
  virtual void visit_tuple_get_item(const TupleGetItemNode*) {}
  virtual void visit_function(const FunctionNode*) {}

 private:
  std::unordered_map<const ExprNode*, bool> seen_;
};

// Rewrites bottom-up with memoisation. Each rewrite_* receives the node whose inputs have
// already been rewritten; returning the original node means "unchanged", and a node whose
// inputs did not change is returned as is (no copy).
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  Expr mutate(const Expr& e);

 protected:
  // Default: rebuild only if an input changed.
  virtual Expr rewrite_var(const Expr& e) { return e; }
  virtual Expr rewrite_constant(const Expr& e) { return e; }
  virtual Expr rewrite_global_var(const Expr& e) { return e; }
  virtual Expr rewrite_call(const Expr& orig, const CallNode* c, std::vector<Expr> new_args, Expr new_callee);
  virtual Expr rewrite_tuple(const Expr& orig, const TupleNode* t, std::vector<Expr> new_fields);
  virtual Expr rewrite_tuple_get_item(const Expr& orig, const TupleGetItemNode* t, Expr new_tuple);
  virtual Expr rewrite_function(const Expr& orig, const FunctionNode* f, Expr new_body);

  std::unordered_map<const ExprNode*, Expr> memo_;
};

}  // namespace sy::ir
