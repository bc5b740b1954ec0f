// Statements and functions of the loop IR: loops, stores, let, if, allocate, extern calls.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tir/expr.h"

namespace sy::tir {

enum class StmtKind { For, Store, Seq, IfThenElse, LetStmt, Allocate, ExternCall };
enum class ForKind { Serial, Parallel, Vectorized, Unrolled };
const char* for_kind_name(ForKind k);

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

// One node type with named fields; which fields are meaningful depends on kind (see builders).
struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  StmtKind kind;
  Expr var;                   // For: loop variable; LetStmt: bound variable
  Expr min, extent;           // For: iterates var over [min, min + extent)
  ForKind for_kind = ForKind::Serial;
  Expr value;                 // Store: stored value; LetStmt: bound value
  Expr cond;                  // IfThenElse
  Buffer buffer;              // Store: target; Allocate: the allocated buffer
  std::vector<Expr> indices;  // Store
  Stmt body;                  // For, LetStmt, Allocate; IfThenElse: then branch
  Stmt else_body;             // IfThenElse (may be null)
  std::vector<Stmt> seq;      // Seq
  std::string func;           // ExternCall: C symbol called as func(buffers..., scalar args...)
  std::vector<Buffer> buffers;    // ExternCall
  std::vector<Expr> scalar_args;  // ExternCall (stateful: integer constants, the site's attributes)
  bool stateful = false;          // ExternCall: func is a stateful extern (extern_abi.h), called as
                                  // run(state, buffers) with the call site's state
};

Stmt for_loop(Expr var, Expr min, Expr extent, ForKind kind, Stmt body);
Stmt store(Buffer b, std::vector<Expr> indices, Expr value);
Stmt seq(std::vector<Stmt> stmts);  // flattens nested sequences; one statement is returned as is
Stmt if_then_else(Expr cond, Stmt then_body, Stmt else_body = nullptr);
Stmt let_stmt(Expr var, Expr value, Stmt body);
Stmt allocate(Buffer b, Stmt body);
Stmt extern_call(std::string func, std::vector<Buffer> buffers, std::vector<Expr> scalar_args, bool stateful = false);
Stmt no_op();  // an empty sequence

bool is_no_op(const Stmt& s);

// A kernel: buffer parameters (inputs then outputs, in the order a caller passes pointers) and a body.
struct PrimFunc {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
  // Some parameters may share memory (an output planned in place of an input, native::kInPlaceAttr):
  // the code generators then promise no restrict / noalias for the parameters.
  bool params_may_alias = false;
};

}  // namespace sy::tir
