#include "tir/stmt.h"

namespace sy::tir {

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
  }
  return "?";
}

Stmt for_loop(Expr var, Expr min, Expr extent, ForKind kind, Stmt body) {
  SY_CHECK(var && var->kind == ExprKind::Var) << "for loop over a non-variable";
  SY_CHECK(min && extent && body) << "incomplete for loop";
  auto n = std::make_shared<StmtNode>(StmtKind::For);
  n->var = std::move(var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->body = std::move(body);
  return n;
}

Stmt store(Buffer b, std::vector<Expr> indices, Expr value) {
  SY_CHECK(b && value) << "incomplete store";
  if (indices.size() != b->shape.size())
    throw Error("tir: store to " + b->name + " with " + std::to_string(indices.size()) +
                " indices, buffer has rank " + std::to_string(b->shape.size()));
  if (value->dtype != b->dtype)
    throw Error("tir: store of " + std::string(dtype_name(value->dtype)) + " into " + b->name + " of " +
                std::string(dtype_name(b->dtype)));
  auto n = std::make_shared<StmtNode>(StmtKind::Store);
  n->buffer = std::move(b);
  n->indices = std::move(indices);
  n->value = std::move(value);
  return n;
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (s->kind == StmtKind::Seq)
      flat.insert(flat.end(), s->seq.begin(), s->seq.end());
    else
      flat.push_back(s);
  }
  if (flat.size() == 1) return flat[0];
  auto n = std::make_shared<StmtNode>(StmtKind::Seq);
  n->seq = std::move(flat);
  return n;
}

Stmt if_then_else(Expr cond, Stmt then_body, Stmt else_body) {
  SY_CHECK(cond && then_body) << "incomplete if";
  SY_CHECK(cond->dtype == DType::boolean) << "if condition is not bool";
  auto n = std::make_shared<StmtNode>(StmtKind::IfThenElse);
  n->cond = std::move(cond);
  n->body = std::move(then_body);
  n->else_body = std::move(else_body);
  return n;
}

Stmt let_stmt(Expr var, Expr value, Stmt body) {
  SY_CHECK(var && var->kind == ExprKind::Var && value && body) << "incomplete let";
  SY_CHECK(var->dtype == value->dtype) << "let of " << var->name << " with a value of another dtype";
  auto n = std::make_shared<StmtNode>(StmtKind::LetStmt);
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return n;
}

Stmt allocate(Buffer b, Stmt body) {
  SY_CHECK(b && body) << "incomplete allocate";
  auto n = std::make_shared<StmtNode>(StmtKind::Allocate);
  n->buffer = std::move(b);
  n->body = std::move(body);
  return n;
}

Stmt extern_call(std::string func, std::vector<Buffer> buffers, std::vector<Expr> scalar_args, bool stateful) {
  auto n = std::make_shared<StmtNode>(StmtKind::ExternCall);
  n->stateful = stateful;
  n->func = std::move(func);
  n->buffers = std::move(buffers);
  n->scalar_args = std::move(scalar_args);
  return n;
}

Stmt no_op() { return std::make_shared<StmtNode>(StmtKind::Seq); }

bool is_no_op(const Stmt& s) { return !s || (s->kind == StmtKind::Seq && s->seq.empty()); }

}  // namespace sy::tir
