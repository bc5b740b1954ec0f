// Graph patterns as values (op, wildcard, constant, variable, alternatives, optional, tuple) and a
// matcher that never changes the graph and says why a match failed.
//
//   using namespace sy::pattern;
//   Pattern conv = op(OpCode::Conv2d, {wildcard(), constant(), constant()});
//   Pattern p = optional(conv, [](Pattern x) { return op(OpCode::Relu, {x}); });
//   Match m = match(p, expr);   // m.ok, m.why, m.inputs, m.nodes
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace sy::pattern {

enum class PatternKind { Wildcard, Constant, Var, Op, Alt, Tuple };

struct PatternNode;
using Pattern = std::shared_ptr<const PatternNode>;

// A constraint on a matched op call beyond its op code: returns "" to accept, else the reason
// (e.g. "groups=3, expected 1"). `desc` names the constraint when the pattern is printed.
struct CallCheck {
  std::function<std::string(const ir::CallNode&)> fn;
  std::string desc;
};

struct PatternNode {
  PatternKind kind;
  ir::OpCode op{};               // Op
  std::vector<Pattern> children;  // Op: arguments; Alt: alternatives in order; Tuple: fields
  CallCheck check;                // Op (optional)
};

// Leaves. Each leaf binds one graph node, which becomes an input of a composite built from the match.
Pattern wildcard();  // any expression
Pattern constant();  // an ir::Constant
Pattern var();       // a function parameter (ir::Var)
// An op call with exactly these arguments (args.size() must equal the call's argument count).
Pattern op(ir::OpCode code, std::vector<Pattern> args, CallCheck check = {});
// The first alternative that matches wins.
Pattern alt(std::vector<Pattern> alternatives);
// `wrap(x)` or `x` alone: alt({wrap(x), x}) (the longer form is tried first).
Pattern optional(const Pattern& x, const std::function<Pattern(Pattern)>& wrap);
Pattern tuple(std::vector<Pattern> fields);

// "nn.relu(nn.conv2d(*, const, const))", with "|" for alternatives and "[desc]" for checks.
std::string pattern_str(const Pattern& p);

struct Match {
  bool ok = false;
  std::string why;  // when !ok: where and why the match failed
  // Graph nodes bound by leaves, in first-visit order (pattern argument order, depth first),
  // each once even if bound by several leaves.
  std::vector<ir::Expr> inputs;
  // The matched interior nodes (op calls and tuples), producers first; the last is the root.
  std::vector<ir::Expr> nodes;
};

// Matches p against the graph rooted at e. Never modifies anything.
Match match(const Pattern& p, const ir::Expr& e);

// A composite rewrite: every match of `pattern` in body (tried from the outputs towards the
// inputs, so the largest match wins) whose interior nodes are used only inside the match and
// not already claimed by an earlier rewrite, and that `accept` (if set) returns "" for, is
// replaced by a call of a new function
//   fn (%p0, %p1, ...) attrs {Composite=name} { <matched nodes over the params> }
// with the match's inputs as arguments. Returns body unchanged when nothing matched.
using MatchCheck = std::function<std::string(const Match&)>;
ir::Expr rewrite_composites(const ir::Expr& body, const Pattern& pattern, const std::string& name,
                            const MatchCheck& accept = nullptr);

// Every node of body that the pattern matches at (roots), with the match; for tests and --explain.
std::vector<std::pair<ir::Expr, Match>> find_matches(const ir::Expr& body, const Pattern& pattern);

}  // namespace sy::pattern
