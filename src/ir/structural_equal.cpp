// Structural equality and hashing of IR graphs.
//
// Equality is an isomorphism between the two DAGs, checked per function scope: within one scope
// (a function body, excluding nested function bodies) every node of `a` maps to exactly one node
// of `b` and back, so sharing must match; parameters are mapped positionally when two functions
// are compared. @global references are names, compared by name whatever their sharing. Nested function bodies get their own scope (they are closed), so a node that is
// reachable from two scopes, which the printer prints once per scope, compares equal to two
// copies. Traversals are iterative: real graphs have thousands of nodes in a chain.
#include "ir/structural_equal.h"

#include <cstring>
#include <functional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "ir/printer.h"
#include "ir/visitor.h"

namespace sy::ir {
namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
size_t str_hash(std::string_view s) { return std::hash<std::string_view>()(s); }

const char* kind_name(ExprKind k) {
  switch (k) {
    case ExprKind::Var: return "var";
    case ExprKind::Constant: return "constant";
    case ExprKind::Call: return "call";
    case ExprKind::Tuple: return "tuple";
    case ExprKind::TupleGetItem: return "tuple projection";
    case ExprKind::Function: return "fn";
    case ExprKind::GlobalVar: return "global";
  }
  return "?";
}

// Short description of a node for messages when no printed name is known.
std::string node_label(const ExprNode* e) {
  if (!e) return "null";
  if (auto* c = e->as<CallNode>()) return c->is_op() ? op_name(c->op) : std::string("function call");
  if (auto* v = e->as<VarNode>()) return "%" + v->name;
  if (auto* g = e->as<GlobalVarNode>()) return "@" + g->name;
  return kind_name(e->kind);
}

std::string func_attrs_str(const FuncAttrs& a) {
  std::string s = "{";
  for (auto& [k, v] : a) s += (s.size() > 1 ? ", " : "") + k + "=\"" + v + "\"";
  return s + "}";
}

std::string first_element_difference(const Tensor& a, const Tensor& b) {
  size_t n = a.nbytes(), es = dtype_size(a.dtype());
  const auto* pa = static_cast<const uint8_t*>(a.raw());
  const auto* pb = static_cast<const uint8_t*>(b.raw());
  for (size_t i = 0; i < n; ++i)
    if (pa[i] != pb[i]) {
      int64_t k = static_cast<int64_t>(i / es);
      std::ostringstream os;
      os << "constant data differs at element " << k << ": " << a.get_as_double(k) << " vs " << b.get_as_double(k);
      return os.str();
    }
  return "constant data differs";
}

class Comparer {
 public:
  // names: printed names of the nodes of `a` (for messages); may be null.
  explicit Comparer(const std::unordered_map<const ExprNode*, std::string>* names) : names_(names) {}

  bool equal(const Expr& a, const Expr& b) {
    scopes_.clear();
    scopes_.emplace_back();
    items_.clear();
    stack_.clear();
    push(a.get(), b.get(), 0, -1, "");
    while (!stack_.empty()) {
      size_t i = stack_.back();
      stack_.pop_back();
      if (!step(i)) return false;
    }
    return true;
  }

  const std::string& difference() const { return diff_; }

 private:
  struct Item {
    const ExprNode* a;
    const ExprNode* b;
    size_t scope;
    long parent;       // index into items_, -1 for the root
    std::string edge;  // how the parent reaches this node: "arg 0", "body", ...
    // Set on a second visit of a compound node after its inputs compared equal: its type is
    // checked last so that the reported difference is the deepest one (the cause, not the
    // types that follow from it).
    bool check_type = false;
  };
  struct ScopeMaps {
    std::unordered_map<const ExprNode*, const ExprNode*> fwd, bwd;
  };

  void push(const ExprNode* a, const ExprNode* b, size_t scope, long parent, std::string edge) {
    items_.push_back(Item{a, b, scope, parent, std::move(edge)});
    stack_.push_back(items_.size() - 1);
  }

  bool fail(size_t i, const std::string& what) {
    const Item& it = items_[i];
    std::string where;
    if (names_) {
      auto n = names_->find(it.a);
      if (n != names_->end()) where = n->second;
    }
    if (where.empty()) {
      // Path from the nearest named ancestor (or the root), innermost first.
      where = node_label(it.a);
      long p = it.parent;
      std::string edge = it.edge;
      for (int steps = 0; p >= 0 && steps < 6; ++steps) {
        const Item& pi = items_[static_cast<size_t>(p)];
        where += ", " + edge + " of " + node_label(pi.a);
        if (names_) {
          auto n = names_->find(pi.a);
          if (n != names_->end()) {
            where += " (" + n->second + ")";
            break;
          }
        }
        edge = pi.edge;
        p = pi.parent;
      }
    }
    diff_ = where + ": " + what;
    return false;
  }

  bool step(size_t i) {
    const ExprNode* a = items_[i].a;
    const ExprNode* b = items_[i].b;
    size_t scope = items_[i].scope;
    if (items_[i].check_type)
      return type_equal(a->type, b->type) || fail(i, "type " + type_str(a->type) + " vs " + type_str(b->type));
    if (!a || !b) return a == b || fail(i, "null node on one side");
    if (a->kind == ExprKind::GlobalVar && b->kind == ExprKind::GlobalVar) {
      // A reference by name: one GlobalVar node used twice equals two nodes of the same name.
      auto& na = a->as<GlobalVarNode>()->name;
      auto& nb = b->as<GlobalVarNode>()->name;
      if (na != nb) return fail(i, "@" + na + " vs @" + nb);
      return type_equal(a->type, b->type) || fail(i, "type " + type_str(a->type) + " vs " + type_str(b->type));
    }
    ScopeMaps& m = scopes_[scope];
    auto f = m.fwd.find(a);
    if (f != m.fwd.end()) return f->second == b || fail(i, "node sharing differs");
    if (m.bwd.count(b)) return fail(i, "node sharing differs");
    m.fwd[a] = b;
    m.bwd[b] = a;
    if (a->kind != b->kind) return fail(i, std::string(kind_name(a->kind)) + " vs " + kind_name(b->kind));
    bool atom = a->kind == ExprKind::Var || a->kind == ExprKind::Constant || a->kind == ExprKind::GlobalVar;
    if (atom && !type_equal(a->type, b->type)) return fail(i, "type " + type_str(a->type) + " vs " + type_str(b->type));
    long self = static_cast<long>(i);
    if (!atom) {
      items_.push_back(items_[i]);
      items_.back().check_type = true;
      stack_.push_back(items_.size() - 1);
    }
    switch (a->kind) {
      case ExprKind::Var: return true;  // bound params were mapped with their function
      case ExprKind::Constant: {
        const Tensor& ta = a->as<ConstantNode>()->value;
        const Tensor& tb = b->as<ConstantNode>()->value;
        return ta.bitwise_equal(tb) || fail(i, first_element_difference(ta, tb));
      }
      case ExprKind::GlobalVar: return true;  // unreachable: compared by name above
      case ExprKind::Call: {
        auto* ca = a->as<CallNode>();
        auto* cb = b->as<CallNode>();
        if (ca->is_op() != cb->is_op()) return fail(i, "op call vs function call");
        if (ca->is_op()) {
          if (ca->op != cb->op) return fail(i, op_name(ca->op) + " vs " + op_name(cb->op));
          if (!ca->attrs || !cb->attrs) {
            if (ca->attrs != cb->attrs) return fail(i, "attrs missing on one side");
          } else if (!attrs_equal(*ca->attrs, *cb->attrs)) {
            return fail(i, "attrs " + attrs_str(*ca->attrs) + " vs " + attrs_str(*cb->attrs));
          }
        }
        if (ca->args.size() != cb->args.size())
          return fail(i, std::to_string(ca->args.size()) + " args vs " + std::to_string(cb->args.size()));
        // The callee is compared after the args: a difference in the args is the cause of any
        // difference in the callee's parameter types.
        if (!ca->is_op()) push(ca->callee.get(), cb->callee.get(), scope, self, "callee");
        for (size_t k = ca->args.size(); k-- > 0;) push(ca->args[k].get(), cb->args[k].get(), scope, self, "arg " + std::to_string(k));
        return true;
      }
      case ExprKind::Tuple: {
        auto* ta = a->as<TupleNode>();
        auto* tb = b->as<TupleNode>();
        if (ta->fields.size() != tb->fields.size())
          return fail(i, std::to_string(ta->fields.size()) + " fields vs " + std::to_string(tb->fields.size()));
        for (size_t k = ta->fields.size(); k-- > 0;)
          push(ta->fields[k].get(), tb->fields[k].get(), scope, self, "field " + std::to_string(k));
        return true;
      }
      case ExprKind::TupleGetItem: {
        auto* ta = a->as<TupleGetItemNode>();
        auto* tb = b->as<TupleGetItemNode>();
        if (ta->index != tb->index) return fail(i, "index " + std::to_string(ta->index) + " vs " + std::to_string(tb->index));
        push(ta->tuple.get(), tb->tuple.get(), scope, self, "tuple");
        return true;
      }
      case ExprKind::Function: {
        auto* fa = a->as<FunctionNode>();
        auto* fb = b->as<FunctionNode>();
        if (fa->attrs != fb->attrs) return fail(i, "fn attrs " + func_attrs_str(fa->attrs) + " vs " + func_attrs_str(fb->attrs));
        if (fa->params.size() != fb->params.size())
          return fail(i, std::to_string(fa->params.size()) + " params vs " + std::to_string(fb->params.size()));
        size_t inner = scopes_.size();
        scopes_.emplace_back();
        ScopeMaps& im = scopes_[inner];
        for (size_t k = 0; k < fa->params.size(); ++k) {
          const ExprNode* pa = fa->params[k].get();
          const ExprNode* pb = fb->params[k].get();
          if (im.fwd.count(pa) || im.bwd.count(pb)) return fail(i, "parameter " + std::to_string(k) + " repeated");
          if (!pa || !pb || !type_equal(pa->type, pb->type))
            return fail(i, "parameter " + std::to_string(k) + " has type " + type_str(pa ? pa->type : nullptr) + " vs " +
                               type_str(pb ? pb->type : nullptr));
          im.fwd[pa] = pb;
          im.bwd[pb] = pa;
        }
        push(fa->body.get(), fb->body.get(), inner, self, "body");
        return true;
      }
    }
    return true;
  }

  const std::unordered_map<const ExprNode*, std::string>* names_;
  std::vector<ScopeMaps> scopes_;
  std::vector<Item> items_;
  std::vector<size_t> stack_;
  std::string diff_;
};

size_t node_hash(const Expr& e, const std::unordered_map<const ExprNode*, size_t>& memo) {
  auto child = [&](const Expr& x) -> size_t {
    if (!x) return 0;
    auto it = memo.find(x.get());
    return it == memo.end() ? 0 : it->second;
  };
  size_t h = mix(static_cast<size_t>(e->kind) + 1, type_hash(e->type));
  switch (e->kind) {
    case ExprKind::Var: break;  // names are not structural
    case ExprKind::Constant: {
      const Tensor& t = e->as<ConstantNode>()->value;
      if (t.defined()) h = mix(h, str_hash(std::string_view(static_cast<const char*>(t.raw()), t.nbytes())));
      break;
    }
    case ExprKind::GlobalVar: h = mix(h, str_hash(e->as<GlobalVarNode>()->name)); break;
    case ExprKind::Call: {
      auto* c = e->as<CallNode>();
      h = mix(h, c->is_op() ? static_cast<size_t>(c->op) + 1 : 0);
      if (c->is_op() && c->attrs) h = mix(h, attrs_hash(*c->attrs));
      for (auto& a : c->args) h = mix(h, child(a));
      if (c->callee) h = mix(h, child(c->callee));
      break;
    }
    case ExprKind::Tuple:
      for (auto& f : e->as<TupleNode>()->fields) h = mix(h, child(f));
      break;
    case ExprKind::TupleGetItem: {
      auto* t = e->as<TupleGetItemNode>();
      h = mix(mix(h, static_cast<size_t>(t->index)), child(t->tuple));
      break;
    }
    case ExprKind::Function: {
      auto* f = e->as<FunctionNode>();
      for (auto& [k, v] : f->attrs) h = mix(h, str_hash(k) * 31 + str_hash(v));
      h = mix(h, child(f->body));
      break;
    }
  }
  return h;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) { return Comparer(nullptr).equal(a, b); }

bool structural_equal(const Module& a, const Module& b) { return first_difference(a, b).empty(); }

size_t structural_hash(const Expr& e) {
  if (!e) return 0;
  std::unordered_map<const ExprNode*, size_t> memo;
  for (const Expr& n : post_order(e, /*into_functions=*/true)) memo[n.get()] = node_hash(n, memo);
  return memo[e.get()];
}

size_t structural_hash(const Module& m) {
  size_t h = 0x51ab1e;
  for (auto& [name, f] : m.functions) h = mix(mix(h, str_hash(name)), structural_hash(f));
  for (auto& n : m.output_names) h = mix(h, str_hash(n));
  return mix(h, m.output_names.size());
}

std::string first_difference(const Module& a, const Module& b) {
  if (a.output_names != b.output_names) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ("\"" + v[i] + "\"");
      return s + "]";
    };
    return "output names differ: " + list(a.output_names) + " vs " + list(b.output_names);
  }
  for (auto& [name, f] : a.functions)
    if (!b.functions.count(name)) return "function @" + name + " only in the first module";
  for (auto& [name, f] : b.functions)
    if (!a.functions.count(name)) return "function @" + name + " only in the second module";
  // Names are computed only once a difference is known: printing is not free on large models.
  for (auto& [name, fa] : a.functions) {
    const Expr& fb = b.functions.at(name);
    if (Comparer(nullptr).equal(fa, fb)) continue;
    std::unordered_map<const ExprNode*, std::string> names;
    try {
      names = printed_names(a);
    } catch (const InternalError&) {
      // Unprintable (invalid) module: describe nodes by their paths instead.
    }
    Comparer named(&names);
    named.equal(fa, fb);
    return "in @" + name + ": " + named.difference();
  }
  return "";
}

}  // namespace sy::ir
