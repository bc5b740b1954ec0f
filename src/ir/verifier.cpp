// Verifier of IR invariants (see verifier.h for the list).
#include "ir/verifier.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace sy::ir {
namespace {

class Verifier {
 public:
  explicit Verifier(const Module& m) : m_(m) {}

  Status run() {
    if (!m_.has("main")) return Status::error("module has no @main function");
    for (auto& [name, f] : m_.functions) {
      if (!f) return Status::error("@" + name + " is null");
      if (!f->as<FunctionNode>()) return Status::error("@" + name + " is not a function");
    }
    for (auto& [name, f] : m_.functions) {
      if (!check_function_tree(f)) return report(name);
    }
    if (!m_.output_names.empty()) {
      const Type& ret = m_.main().ret_type();
      size_t n = ret && ret->kind == TypeKind::Tuple ? ret->fields.size() : 1;
      if (n != m_.output_names.size())
        return Status::error("module has " + std::to_string(m_.output_names.size()) + " output names but @main returns " +
                             std::to_string(n) + " values");
    }
    return Status::ok();
  }

 private:
  // The message names the function whose scope is violated; it is filled in by report() once
  // printed names are known.
  bool free_var(const ExprNode* user, const ExprNode* v) {
    return problem(user, "uses %" + v->as<VarNode>()->name + ", which is not a parameter of " + kScopeMark +
                             " (functions must be closed)");
  }

  bool problem(const ExprNode* at, std::string msg) {
    bad_node_ = at;
    msg_ = std::move(msg);
    return false;
  }

  Status report(const std::string& fn) {
    std::string where;
    std::string scope = "@" + fn;
    try {
      auto names = printed_names(m_);
      auto it = names.find(bad_node_);
      if (it != names.end()) where = it->second;
      if (bad_scope_) {
        auto s = names.find(bad_scope_);
        scope = s != names.end() ? "fn " + s->second : "a nested fn";
      }
    } catch (const InternalError&) {
      // Not printable: the message alone must do.
    }
    for (size_t at = msg_.find(kScopeMark); at != std::string::npos; at = msg_.find(kScopeMark))
      msg_.replace(at, std::strlen(kScopeMark), scope);
    std::string what;
    if (bad_node_) {
      if (auto* c = bad_node_->as<CallNode>()) what = c->is_op() && c->op < OpCode::kCount ? op_name(c->op) : "function call";
      else if (bad_node_->kind == ExprKind::Var && !where.empty()) what = "";
      else if (auto* v = bad_node_->as<VarNode>()) what = "%" + v->name;
      else if (bad_node_->kind == ExprKind::Tuple) what = "tuple";
      else if (bad_node_->kind == ExprKind::TupleGetItem) what = "tuple projection";
      else if (bad_node_->kind == ExprKind::Function) what = where.empty() || where[0] != '@' ? "fn" : "";
      else if (bad_node_->kind == ExprKind::Constant) what = "constant";
      else if (auto* g = bad_node_->as<GlobalVarNode>()) what = "@" + g->name;
    }
    std::string out = "in @" + fn + ": ";
    if (!where.empty()) out += where + (what.empty() ? "" : " (" + what + ")") + ": ";
    else if (!what.empty()) out += what + ": ";
    return Status::error(out + msg_);
  }

  // Checks a top-level function and, each as its own closed scope, the functions nested in it.
  bool check_function_tree(const Expr& top) {
    std::vector<const FunctionNode*> work{top->as<FunctionNode>()};
    std::unordered_set<const FunctionNode*> queued{work.back()};
    while (!work.empty()) {
      const FunctionNode* f = work.back();
      work.pop_back();
      std::vector<const FunctionNode*> nested;
      if (!check_scope(*f, nested)) {
        bad_scope_ = f == top->as<FunctionNode>() ? nullptr : f;
        return false;
      }
      for (auto* n : nested)
        if (queued.insert(n).second) work.push_back(n);
    }
    return true;
  }

  bool check_scope(const FunctionNode& f, std::vector<const FunctionNode*>& nested) {
    std::unordered_set<const ExprNode*> params;
    std::vector<Type> ptypes;
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Expr& p = f.params[i];
      if (!p || !p->as<VarNode>()) return problem(&f, "parameter " + std::to_string(i) + " is not a variable");
      if (!p->type) return problem(p.get(), "parameter without a type");
      if (!params.insert(p.get()).second)
        return problem(&f, "parameter " + std::to_string(i) + " (%" + p->as<VarNode>()->name + ") appears twice");
      ptypes.push_back(p->type);
    }
    if (!f.body) return problem(&f, "function without a body");
    // Post-order, iterative, null-safe (post_order would dereference a null input).
    if (f.body->kind == ExprKind::Var && !params.count(f.body.get())) return free_var(&f, f.body.get());
    std::unordered_set<const ExprNode*> done;
    std::vector<std::pair<const ExprNode*, bool>> stack{{f.body.get(), false}};
    while (!stack.empty()) {
      auto [e, expanded] = stack.back();
      stack.pop_back();
      if (done.count(e)) continue;
      if (!expanded) {
        stack.emplace_back(e, true);
        Expr self(std::shared_ptr<const ExprNode>(), e);  // non-owning, only to list inputs
        for (const Expr& in : node_inputs(self)) {
          if (!in) return problem(e, "has a null input");
          if (in->kind == ExprKind::Var && !params.count(in.get())) return free_var(e, in.get());
          if (!done.count(in.get())) stack.emplace_back(in.get(), false);
        }
        continue;
      }
      done.insert(e);
      if (!check_node(e)) return false;
      if (auto* fn = e->as<FunctionNode>()) nested.push_back(fn);
    }
    Type ft = func_type(ptypes, f.body->type);
    if (!type_equal(f.type, ft))
      return problem(&f, "stored type " + type_str(f.type) + " differs from its parameters and body, " + type_str(ft));
    return true;
  }

  bool check_node(const ExprNode* e) {
    if (!e->type) return problem(e, "node without a type");
    switch (e->kind) {
      case ExprKind::Var: return true;  // uses were checked at their consumers
      case ExprKind::Constant: {
        const Tensor& t = e->as<ConstantNode>()->value;
        if (!t.defined()) return problem(e, "constant without data");
        if (!type_equal(e->type, tensor_type(t.shape(), t.dtype())))
          return problem(e, "stored type " + type_str(e->type) + " differs from its data, " +
                                type_str(tensor_type(t.shape(), t.dtype())));
        return true;
      }
      case ExprKind::GlobalVar: {
        auto& name = e->as<GlobalVarNode>()->name;
        auto it = m_.functions.find(name);
        if (it == m_.functions.end()) return problem(e, "refers to unknown function @" + name);
        if (!type_equal(e->type, it->second->type))
          return problem(e, "has type " + type_str(e->type) + " but @" + name + " has type " + type_str(it->second->type));
        return true;
      }
      case ExprKind::Call: return check_call(e->as<CallNode>());
      case ExprKind::Tuple: {
        auto* t = e->as<TupleNode>();
        if (e->type->kind != TypeKind::Tuple || e->type->fields.size() != t->fields.size())
          return problem(e, "stored type " + type_str(e->type) + " is not a tuple of " + std::to_string(t->fields.size()));
        for (size_t i = 0; i < t->fields.size(); ++i)
          if (!type_equal(e->type->fields[i], t->fields[i]->type))
            return problem(e, "stored type of field " + std::to_string(i) + " is " + type_str(e->type->fields[i]) +
                                  ", the field has type " + type_str(t->fields[i]->type));
        return true;
      }
      case ExprKind::TupleGetItem: {
        auto* g = e->as<TupleGetItemNode>();
        const Type& tt = g->tuple->type;
        if (!tt || tt->kind != TypeKind::Tuple) return problem(e, "projection ." + std::to_string(g->index) + " of a non-tuple of type " + type_str(tt));
        if (g->index < 0 || static_cast<size_t>(g->index) >= tt->fields.size())
          return problem(e, "tuple index " + std::to_string(g->index) + " out of range for " + type_str(tt));
        if (!type_equal(e->type, tt->fields[static_cast<size_t>(g->index)]))
          return problem(e, "stored type " + type_str(e->type) + " differs from field " + std::to_string(g->index) +
                                " of " + type_str(tt));
        return true;
      }
      case ExprKind::Function: return true;  // checked as its own scope
    }
    return true;
  }

  bool check_call(const CallNode* c) {
    for (auto& a : c->args)
      if (!a->type) return problem(c, "argument without a type");
    if (!c->is_op()) {
      const Type& ft = c->callee->type;
      if (!ft || ft->kind != TypeKind::Func) return problem(c, "callee of type " + type_str(ft) + " is not a function");
      if (ft->fields.size() != c->args.size())
        return problem(c, "calls a function of " + std::to_string(ft->fields.size()) + " parameters with " +
                              std::to_string(c->args.size()) + " arguments");
      for (size_t i = 0; i < c->args.size(); ++i)
        if (!type_equal(ft->fields[i], c->args[i]->type))
          return problem(c, "argument " + std::to_string(i) + " has type " + type_str(c->args[i]->type) +
                                ", the parameter expects " + type_str(ft->fields[i]));
      if (!type_equal(c->type, ft->ret))
        return problem(c, "stored type " + type_str(c->type) + " differs from the callee's return type " + type_str(ft->ret));
      return true;
    }
    if (c->op >= OpCode::kCount) return problem(c, "invalid op code");
    const OpDef& def = op_def(c->op);
    if (!c->attrs) return problem(c, "op call without attributes");
    std::string want = def.make_attrs()->type_name();
    if (want != c->attrs->type_name())
      return problem(c, "has attributes " + std::string(c->attrs->type_name()) + ", " + def.name + " takes " + want);
    int n = static_cast<int>(c->args.size());
    if (n < def.min_args || (def.max_args >= 0 && n > def.max_args))
      return problem(c, std::to_string(n) + " arguments, " + def.name + " takes " + std::to_string(def.min_args) +
                            (def.max_args < 0 ? " or more" : def.max_args == def.min_args ? "" : " to " + std::to_string(def.max_args)));
    std::vector<Type> types;
    for (auto& a : c->args) types.push_back(a->type);
    Type t;
    try {
      t = def.relation(types, *c->attrs);
    } catch (const Error& e) {
      return problem(c, std::string("type relation fails: ") + e.what());
    }
    if (!type_equal(c->type, t))
      return problem(c, "stored type " + type_str(c->type) + " differs from the type its relation gives, " + type_str(t));
    return true;
  }

  static constexpr const char* kScopeMark = "\x01scope\x01";
  const Module& m_;
  const FunctionNode* bad_scope_ = nullptr;  // null: the top-level function
  const ExprNode* bad_node_ = nullptr;
  std::string msg_;
};

}  // namespace

Status verify(const Module& m) {
  try {
    return Verifier(m).run();
  } catch (const InternalError& e) {
    return Status::error(e.what());
  }
}

}  // namespace sy::ir
