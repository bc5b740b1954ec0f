// The implementations that apply to an anchor op, their order, and the choice among them.
#include "strategy/strategy.h"

#include <algorithm>
#include <map>

#include "ir/type.h"
#include "ir/visitor.h"
#include "ops/op.h"
#include "support/error.h"
#include "te/schedule.h"

namespace sy::strategy {

namespace {

int strength(ops::OpKind k) {
  switch (k) {
    case ops::OpKind::Elemwise: return 0;
    case ops::OpKind::Broadcast: return 1;
    case ops::OpKind::Injective: return 2;
    case ops::OpKind::Reduce: return 3;
    case ops::OpKind::OutEWiseFusable: return 4;
    case ops::OpKind::Opaque: return 5;
  }
  return 0;
}

// Registered beside topi's; std::map nodes do not move, so pointers into the vectors' elements
// are stable only while nothing is added: registration happens before any compile.
std::map<ops::OpCode, std::vector<topi::OpImpl>>& extra() {
  static auto* m = new std::map<ops::OpCode, std::vector<topi::OpImpl>>;
  return *m;
}

}  // namespace

const ir::CallNode* anchor_of(const ir::FunctionNode& fn) {
  const ir::CallNode* best = nullptr;
  int best_s = -1;
  for (const ir::Expr& e : ir::post_order(fn.body)) {
    auto* c = e->as<ir::CallNode>();
    if (!c || !c->is_op()) continue;
    int s = strength(ops::op_def(c->op).kind);
    if (s >= best_s) {
      best = c;
      best_s = s;
    }
  }
  return best;
}

void register_implementation(ops::OpCode op, topi::OpImpl impl) {
  SY_CHECK(!impl.name.empty()) << "strategy: an implementation of " << ops::op_name(op) << " needs a name";
  for (const topi::OpImpl* i : implementations(op))
    SY_CHECK(i->name != impl.name) << "strategy: " << impl.name << " registered twice for " << ops::op_name(op);
  extra()[op].push_back(std::move(impl));
}

const topi::OpImpl* implementation_named(ops::OpCode op, const std::string& name) {
  for (const topi::OpImpl* i : implementations(op))
    if (i->name == name) return i;
  return nullptr;
}

std::string library_of(ops::OpCode op, const std::string& name) {
  const topi::OpImpl* i = implementation_named(op, name);
  return i ? i->library : "";
}

std::vector<const topi::OpImpl*> implementations(ops::OpCode op) {
  std::vector<const topi::OpImpl*> out;
  for (const topi::OpImpl& i : topi::implementations(op)) out.push_back(&i);
  auto it = extra().find(op);
  if (it != extra().end())
    for (const topi::OpImpl& i : it->second) out.push_back(&i);
  return out;
}

Applicable applicable(const ir::CallNode& anchor, const target::Target& t) {
  Applicable a;
  for (const topi::OpImpl* i : implementations(anchor.op)) {
    std::string why = i->why_not ? i->why_not(anchor, t) : "";
    if (!why.empty()) {
      a.rejected.emplace_back(i->name, why);
      continue;
    }
    a.entries.push_back({i, i->priority ? i->priority(anchor, t) : topi::kDefaultPriority});
  }
  std::sort(a.entries.begin(), a.entries.end(), [](const Applicable::Entry& x, const Applicable::Entry& y) {
    return x.priority != y.priority ? x.priority > y.priority : x.impl->name < y.impl->name;
  });
  return a;
}

const topi::OpImpl& require(const ir::CallNode& anchor, const target::Target& t, const std::string& name) {
  Applicable a = applicable(anchor, t);
  for (const auto& e : a.entries)
    if (e.impl->name == name) return *e.impl;
  for (const auto& [n, why] : a.rejected)
    if (n == name) throw Error("implementation " + name + " does not apply to this " + ops::op_name(anchor.op) + ": " + why);
  throw Error("no implementation " + name + " of " + ops::op_name(anchor.op));
}

std::optional<Choice> choose(const ir::FunctionNode& fn, const target::Target& t, const Chooser& chooser) {
  const ir::CallNode* anchor = anchor_of(fn);
  if (!anchor) return std::nullopt;
  Applicable a = applicable(*anchor, t);
  if (a.entries.empty()) return std::nullopt;
  std::string note;
  if (chooser) {
    if (std::optional<Choice> c = chooser(fn, *anchor, t)) {
      bool ok = std::any_of(a.entries.begin(), a.entries.end(),
                            [&](const Applicable::Entry& e) { return e.impl->name == c->implementation; });
      if (ok) return c;
      note = " (the record's " + c->implementation + " does not apply here)";
    }
  }
  Choice c;
  c.implementation = a.entries.front().impl->name;
  c.why = "priority " + std::to_string(a.entries.front().priority) + note;
  return c;
}

std::string describe(const ir::CallNode& anchor) {
  auto type = [](const ir::Type& t) {
    if (!ir::is_tensor(t)) return ir::type_str(t);
    const ir::TypeNode& tt = ir::as_tensor(t);
    std::string s;
    for (int64_t d : tt.shape) {
      if (!s.empty()) s += 'x';
      s += std::to_string(d);
    }
    return (s.empty() ? "scalar" : s) + " " + std::string(dtype_name(tt.dtype));
  };
  std::string s = ops::op_name(anchor.op) + "(";
  for (size_t i = 0; i < anchor.args.size(); ++i) s += (i ? ", " : "") + type(anchor.args[i]->type);
  return s + ") -> " + type(anchor.type);
}

std::string describe_group(const ir::FunctionNode& fn) {
  const ir::CallNode* anchor = anchor_of(fn);
  if (!anchor) return "(no op)";
  std::string rest;
  for (const ir::Expr& e : ir::post_order(fn.body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c != anchor) rest += (rest.empty() ? "" : ", ") + ops::op_name(c->op);
  return describe(*anchor) + (rest.empty() ? "" : " + " + rest);
}

ir::Expr with_choice(const ir::FunctionNode& fn, const Choice& c) {
  ir::FuncAttrs attrs = fn.attrs;
  attrs[kImplementationAttr] = c.implementation;
  if (c.knobs.empty())
    attrs.erase(kKnobsAttr);
  else
    attrs[kKnobsAttr] = c.knobs;
  return ir::function(fn.params, fn.body, attrs);
}

}  // namespace sy::strategy
