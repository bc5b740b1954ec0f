// Pattern constructors, printing, matching and composite rewriting.
#include "support/numbered.h"
#include "pattern/pattern.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/visitor.h"
#include "support/error.h"

namespace sy::pattern {

namespace {

Pattern make(PatternKind k) {
  auto p = std::make_shared<PatternNode>();
  p->kind = k;
  return p;
}

std::string expr_desc(const ir::Expr& e) {
  switch (e->kind) {
    case ir::ExprKind::Var: return "variable %" + e->as<ir::VarNode>()->name;
    case ir::ExprKind::Constant: return "a constant";
    case ir::ExprKind::GlobalVar: return "@" + e->as<ir::GlobalVarNode>()->name;
    case ir::ExprKind::Tuple: return "a tuple";
    case ir::ExprKind::TupleGetItem: return "a tuple item";
    case ir::ExprKind::Function: return "a function";
    case ir::ExprKind::Call: {
      auto* c = e->as<ir::CallNode>();
      if (c->is_op()) return ir::op_name(c->op);
      if (auto* f = c->callee->as<ir::FunctionNode>()) {
        auto it = f->attrs.find("Composite");
        if (it != f->attrs.end()) return "composite " + it->second;
      }
      return "a function call";
    }
  }
  return "?";
}

// Matching state: what is bound so far. Copied to backtrack across alternatives.
struct State {
  std::vector<ir::Expr> inputs;
  std::vector<ir::Expr> nodes;
};

void add_once(std::vector<ir::Expr>& v, const ir::Expr& e) {
  if (std::find(v.begin(), v.end(), e) == v.end()) v.push_back(e);
}

// Returns "" on success, else why not.
std::string match_into(const Pattern& p, const ir::Expr& e, State& s) {
  switch (p->kind) {
    case PatternKind::Wildcard:
      add_once(s.inputs, e);
      return "";
    case PatternKind::Constant:
      if (!e->as<ir::ConstantNode>()) return "expected a constant, found " + expr_desc(e);
      add_once(s.inputs, e);
      return "";
    case PatternKind::Var:
      if (!e->as<ir::VarNode>()) return "expected a variable, found " + expr_desc(e);
      add_once(s.inputs, e);
      return "";
    case PatternKind::Op: {
      auto* c = e->as<ir::CallNode>();
      const std::string& want = ir::op_name(p->op);
      if (!c || !c->is_op() || c->op != p->op) return "expected " + want + ", found " + expr_desc(e);
      if (c->args.size() != p->children.size())
        return want + ": expected " + std::to_string(p->children.size()) + " arguments, found " +
               std::to_string(c->args.size());
      if (p->check.fn) {
        std::string why = p->check.fn(*c);
        if (!why.empty()) return want + ": " + why;
      }
      for (size_t i = 0; i < c->args.size(); ++i) {
        std::string why = match_into(p->children[i], c->args[i], s);
        if (!why.empty()) return want + " argument " + std::to_string(i) + ": " + why;
      }
      add_once(s.nodes, e);
      return "";
    }
    case PatternKind::Alt: {
      std::string whys;
      for (size_t i = 0; i < p->children.size(); ++i) {
        State trial = s;
        std::string why = match_into(p->children[i], e, trial);
        if (why.empty()) {
          s = std::move(trial);
          return "";
        }
        whys += (i ? "; or " : "") + why;
      }
      return p->children.size() == 1 ? whys : "(" + whys + ")";
    }
    case PatternKind::Tuple: {
      auto* t = e->as<ir::TupleNode>();
      if (!t) return "expected a tuple, found " + expr_desc(e);
      if (t->fields.size() != p->children.size())
        return "expected a tuple of " + std::to_string(p->children.size()) + ", found " +
               std::to_string(t->fields.size()) + " fields";
      for (size_t i = 0; i < t->fields.size(); ++i) {
        std::string why = match_into(p->children[i], t->fields[i], s);
        if (!why.empty()) return "tuple field " + std::to_string(i) + ": " + why;
      }
      add_once(s.nodes, e);
      return "";
    }
  }
  return "unknown pattern";
}

}  // namespace

Pattern wildcard() { return make(PatternKind::Wildcard); }
Pattern constant() { return make(PatternKind::Constant); }
Pattern var() { return make(PatternKind::Var); }

Pattern op(ir::OpCode code, std::vector<Pattern> args, CallCheck check) {
  auto p = std::make_shared<PatternNode>();
  p->kind = PatternKind::Op;
  p->op = code;
  p->children = std::move(args);
  p->check = std::move(check);
  return p;
}

Pattern alt(std::vector<Pattern> alternatives) {
  SY_CHECK(!alternatives.empty()) << "alt() of no patterns";
  auto p = std::make_shared<PatternNode>();
  p->kind = PatternKind::Alt;
  p->children = std::move(alternatives);
  return p;
}

Pattern optional(const Pattern& x, const std::function<Pattern(Pattern)>& wrap) { return alt({wrap(x), x}); }

Pattern tuple(std::vector<Pattern> fields) {
  auto p = std::make_shared<PatternNode>();
  p->kind = PatternKind::Tuple;
  p->children = std::move(fields);
  return p;
}

std::string pattern_str(const Pattern& p) {
  auto list = [](const std::vector<Pattern>& ps, const char* sep) {
    std::string s;
    for (size_t i = 0; i < ps.size(); ++i) s += (i ? sep : "") + pattern_str(ps[i]);
    return s;
  };
  switch (p->kind) {
    case PatternKind::Wildcard: return "*";
    case PatternKind::Constant: return "const";
    case PatternKind::Var: return "var";
    case PatternKind::Op: {
      std::string s = ir::op_name(p->op);
      if (!p->check.desc.empty()) s += "[" + p->check.desc + "]";
      return s + "(" + list(p->children, ", ") + ")";
    }
    case PatternKind::Alt: return std::string("(") + list(p->children, " | ") + ")";
    case PatternKind::Tuple: return std::string("(") + list(p->children, ", ") + ",)";
  }
  return "?";
}

Match match(const Pattern& p, const ir::Expr& e) {
  State s;
  Match m;
  m.why = match_into(p, e, s);
  m.ok = m.why.empty();
  if (m.ok) {
    m.inputs = std::move(s.inputs);
    m.nodes = std::move(s.nodes);
  }
  return m;
}

std::vector<std::pair<ir::Expr, Match>> find_matches(const ir::Expr& body, const Pattern& pattern) {
  std::vector<std::pair<ir::Expr, Match>> out;
  for (const ir::Expr& e : ir::post_order(body)) {
    if (e->kind != ir::ExprKind::Call && e->kind != ir::ExprKind::Tuple) continue;
    Match m = match(pattern, e);
    if (m.ok && !m.nodes.empty()) out.emplace_back(e, std::move(m));
  }
  return out;
}

namespace {

// Builds fn(params){matched nodes} for one match.
ir::Expr outline(const Match& m, const std::string& name) {
  std::unordered_map<const ir::ExprNode*, ir::Expr> sub;
  std::vector<ir::Expr> params;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    ir::Expr p = ir::var(numbered("p", static_cast<int64_t>(i)), m.inputs[i]->type);
    params.push_back(p);
    sub[m.inputs[i].get()] = p;
  }
  for (const ir::Expr& n : m.nodes) {
    auto remap = [&](const std::vector<ir::Expr>& xs) {
      std::vector<ir::Expr> out;
      for (const ir::Expr& x : xs) {
        auto it = sub.find(x.get());
        SY_CHECK(it != sub.end()) << "composite node input outside the match";
        out.push_back(it->second);
      }
      return out;
    };
    if (auto* c = n->as<ir::CallNode>()) {
      SY_CHECK(c->is_op()) << "composite patterns match op calls";
      sub[n.get()] = ir::call(c->op, remap(c->args), c->attrs);
    } else if (auto* t = n->as<ir::TupleNode>()) {
      sub[n.get()] = ir::tuple(remap(t->fields));
    }
  }
  return ir::function(params, sub.at(m.nodes.back().get()), {{"Composite", name}});
}

class CompositeRewriter : public ir::ExprMutator {
 public:
  explicit CompositeRewriter(std::unordered_map<const ir::ExprNode*, std::pair<Match, ir::Expr>> roots)
      : roots_(std::move(roots)) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    if (ir::Expr r = replace(orig)) return r;
    return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
  }
  ir::Expr rewrite_tuple(const ir::Expr& orig, const ir::TupleNode* t, std::vector<ir::Expr> fields) override {
    if (ir::Expr r = replace(orig)) return r;
    return ExprMutator::rewrite_tuple(orig, t, std::move(fields));
  }

 private:
  ir::Expr replace(const ir::Expr& orig) {
    auto it = roots_.find(orig.get());
    if (it == roots_.end()) return nullptr;
    const auto& [m, fn] = it->second;
    std::vector<ir::Expr> args;
    for (const ir::Expr& in : m.inputs) args.push_back(memo_.at(in.get()));
    return ir::call_function(fn, std::move(args));
  }

  std::unordered_map<const ir::ExprNode*, std::pair<Match, ir::Expr>> roots_;
};

}  // namespace

ir::Expr rewrite_composites(const ir::Expr& body, const Pattern& pattern, const std::string& name,
                            const MatchCheck& accept) {
  const std::vector<ir::Expr> order = ir::post_order(body);
  std::unordered_map<const ir::ExprNode*, std::vector<const ir::ExprNode*>> users;
  for (const ir::Expr& e : order)
    for (const ir::Expr& in : ir::node_inputs(e)) users[in.get()].push_back(e.get());

  std::unordered_set<const ir::ExprNode*> claimed;
  std::unordered_map<const ir::ExprNode*, std::pair<Match, ir::Expr>> roots;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Expr& e = *it;
    if (claimed.count(e.get())) continue;
    if (e->kind != ir::ExprKind::Call && e->kind != ir::ExprKind::Tuple) continue;
    Match m = match(pattern, e);
    if (!m.ok || m.nodes.empty()) continue;
    std::unordered_set<const ir::ExprNode*> inside;
    for (const ir::Expr& n : m.nodes) inside.insert(n.get());
    bool ok = true;
    for (const ir::Expr& n : m.nodes) {
      if (claimed.count(n.get())) ok = false;
      // Interior values must not escape: outlining would compute them twice.
      if (n != e && n.get() != body.get())
        for (const ir::ExprNode* u : users[n.get()])
          if (!inside.count(u)) ok = false;
      if (n != e && n.get() == body.get()) ok = false;
    }
    for (const ir::Expr& in : m.inputs)
      if (inside.count(in.get())) ok = false;
    if (!ok) continue;
    if (accept && !accept(m).empty()) continue;
    for (const ir::Expr& n : m.nodes) claimed.insert(n.get());
    ir::Expr fn = outline(m, name);
    roots.emplace(e.get(), std::make_pair(std::move(m), std::move(fn)));
  }
  if (roots.empty()) return body;
  CompositeRewriter rw(std::move(roots));
  return rw.mutate(body);
}

}  // namespace sy::pattern
