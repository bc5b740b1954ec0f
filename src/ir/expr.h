// The graph IR: immutable, shared dataflow nodes. A node's type is computed when it is built.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/attrs.h"
#include "ir/type.h"
#include "ir/op.h"
#include "support/tensor.h"

namespace sy::ir {

enum class ExprKind { Var, Constant, Call, Tuple, TupleGetItem, Function, GlobalVar };

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  explicit ExprNode(ExprKind k, Type t) : kind(k), type(std::move(t)) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const Type type;
  template <typename T> const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
};

// A function parameter. Identity is the node itself; the name is for printing only.
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  VarNode(std::string n, Type t) : ExprNode(kKind, std::move(t)), name(std::move(n)) {}
  const std::string name;
};

struct ConstantNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Constant;
  explicit ConstantNode(Tensor v);
  const Tensor value;
};

// A reference to a module-level function by name (its type is the function's type).
struct GlobalVarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::GlobalVar;
  GlobalVarNode(std::string n, Type t) : ExprNode(kKind, std::move(t)), name(std::move(n)) {}
  const std::string name;
};

// Calls either a built-in op (callee == nullptr) or a function (a FunctionNode or GlobalVarNode).
struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  CallNode(Type t, OpCode op, Expr callee, std::vector<Expr> args, AttrsPtr attrs)
      : ExprNode(kKind, std::move(t)), op(op), callee(std::move(callee)), args(std::move(args)),
        attrs(std::move(attrs)) {}
  bool is_op() const { return callee == nullptr; }
  template <typename A> const A& attrs_as() const {
    auto* p = dynamic_cast<const A*>(attrs.get());
    SY_CHECK(p) << "call of " << op_name(op) << " does not have " << A::kName;
    return *p;
  }
  const OpCode op;  // meaningful only when is_op()
  const Expr callee;
  const std::vector<Expr> args;
  const AttrsPtr attrs;  // never null for op calls
};

struct TupleNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Tuple;
  TupleNode(Type t, std::vector<Expr> f) : ExprNode(kKind, std::move(t)), fields(std::move(f)) {}
  const std::vector<Expr> fields;
};

struct TupleGetItemNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::TupleGetItem;
  TupleGetItemNode(Type t, Expr tup, int i) : ExprNode(kKind, std::move(t)), tuple(std::move(tup)), index(i) {}
  const Expr tuple;
  const int index;
};

using FuncAttrs = std::map<std::string, std::string>;  // e.g. Composite, Compiler, Primitive

struct FunctionNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Function;
  FunctionNode(Type t, std::vector<Expr> p, Expr b, FuncAttrs a)
      : ExprNode(kKind, std::move(t)), params(std::move(p)), body(std::move(b)), attrs(std::move(a)) {}
  const std::vector<Expr> params;  // VarNodes
  const Expr body;
  const FuncAttrs attrs;
  const Type& ret_type() const { return type->ret; }
};

// ---- builders: compute the node's type, throwing sy::Error on an ill-typed construction ----
Expr var(std::string name, Type type);
Expr constant(Tensor value);
Expr global_var(std::string name, Type func_type);
Expr call(OpCode op, std::vector<Expr> args, AttrsPtr attrs = nullptr);
// Convenience: call with a typed attribute struct.
// (Constrained and converted explicitly: otherwise the shared_ptr argument would select this
// template again and recurse through ever-deeper instantiations.)
template <typename A>
  requires std::is_base_of_v<Attrs, A>
Expr call(OpCode op, std::vector<Expr> args, A attrs) {
  return call(op, std::move(args), AttrsPtr(std::make_shared<const A>(std::move(attrs))));
}
Expr call_function(Expr callee, std::vector<Expr> args);
Expr tuple(std::vector<Expr> fields);
Expr tuple_get_item(Expr tuple, int index);
Expr function(std::vector<Expr> params, Expr body, FuncAttrs attrs = {});

// Shorthands for the most common checks.
inline const TypeNode& tensor_of(const Expr& e) { return as_tensor(e->type); }
inline const Shape& shape_of(const Expr& e) { return tensor_of(e).shape; }
inline DType dtype_of(const Expr& e) { return tensor_of(e).dtype; }

}  // namespace sy::ir
