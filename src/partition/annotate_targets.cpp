// Pass: annotate targets.
#include "ops/op.h"
#include "support/numbered.h"
#include "partition/annotate_targets.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/visitor.h"
#include "partition/region_util.h"

namespace sy::partition {

namespace {

// Backends in the order they are asked about calls of `op_name`.
std::vector<const backends::Backend*> ask_order(const std::string& op_name, const PartitionOptions& opts) {
  std::vector<const backends::Backend*> order = opts.backends;
  auto it = opts.prefer.find(op_name);
  if (it == opts.prefer.end()) return order;
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i]->name() == it->second) {
      const backends::Backend* b = order[i];
      order.erase(order.begin() + static_cast<long>(i));
      order.insert(order.begin(), b);
      break;
    }
  return order;
}


// Decides one op call or composite call.
NodeDecision decide(const ir::Expr& e, const PartitionOptions& opts) {
  NodeDecision d;
  d.node = node_label(e);
  auto* c = e->as<ir::CallNode>();
  std::string composite = callee_attr(e, kComposite);
  if (!composite.empty()) {
    std::string owner = composite.substr(0, composite.find('.'));
    for (const backends::Backend* b : opts.backends)
      if (b->name() == owner) {
        d.backend = owner;
        d.why = "matched " + owner + "'s composite pattern " + composite;
        return d;
      }
    d.rejections.emplace_back(owner, "backend not selected");
    return d;
  }
  if (!c->is_op()) return d;
  const std::string& op = ops::op_name(c->op);
  bool args_ok = true;
  for (const ir::Expr& a : c->args) args_ok = args_ok && ir::is_tensor(a->type);
  if (!ir::is_tensor(e->type) || !args_ok) {
    for (const backends::Backend* b : opts.backends)
      d.rejections.emplace_back(b->name(), "calls with tuple arguments or results stay native");
    return d;
  }
  auto it = opts.prefer.find(op);
  for (const backends::Backend* b : ask_order(op, opts)) {
    if (!d.backend.empty()) {
      backends::Verdict v = b->supports_op(*c);
      d.rejections.emplace_back(b->name(), v.ok ? "supported, but " + d.backend + " comes first" : v.reason);
      continue;
    }
    backends::Verdict v = b->supports_op(*c);
    if (v.ok) {
      d.backend = b->name();
      d.why = (it != opts.prefer.end() && it->second == b->name()) ? "placed on " + b->name() + " by the user"
                                                                    : b->name() + " is the first backend that supports it";
    } else {
      d.rejections.emplace_back(b->name(), v.reason);
    }
  }
  return d;
}

// fn (non-constant args) attrs {Compiler=backend} { e over those params and the constants }(args)
ir::Expr wrap(const ir::Expr& e, const std::string& backend) {
  auto* c = e->as<ir::CallNode>();
  std::vector<ir::Expr> params, outer_args, inner_args;
  std::unordered_map<const ir::ExprNode*, ir::Expr> seen;
  for (const ir::Expr& a : c->args) {
    if (a->kind == ir::ExprKind::Constant) {
      inner_args.push_back(a);
      continue;
    }
    auto it = seen.find(a.get());
    if (it == seen.end()) {
      ir::Expr p = ir::var(numbered("a", static_cast<int64_t>(params.size())), a->type);
      params.push_back(p);
      outer_args.push_back(a);
      it = seen.emplace(a.get(), p).first;
    }
    inner_args.push_back(it->second);
  }
  ir::Expr inner = c->is_op() ? ir::call(c->op, inner_args, c->attrs) : ir::call_function(c->callee, inner_args);
  ir::Expr fn = ir::function(params, inner, {{kCompiler, backend}});
  return ir::call_function(fn, outer_args);
}

class Annotator : public ir::ExprMutator {
 public:
  Annotator(const ir::Expr& body, const PartitionOptions& opts, PartitionReport* report)
      : opts_(opts), report_(report) {
    for (const ir::Expr& e : ir::post_order(body)) top_.insert(e.get());
  }

  // Marks the decisions of the nodes whose values the model returns.
  void mark_outputs(const ir::Expr& body) {
    if (!report_) return;
    std::vector<ir::Expr> outs{body};
    if (auto* t = body->as<ir::TupleNode>()) outs = t->fields;
    for (const ir::Expr& o : outs) {
      int p = producer(o);
      if (p >= 0) report_->decisions[static_cast<size_t>(p)].model_output = true;
    }
  }

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    ir::Expr e = ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
    bool composite = !callee_attr(orig, kComposite).empty();
    // Only @main's own nodes: composite bodies are the backend's business.
    if (!top_.count(orig.get()) || (!c->is_op() && !composite)) return e;  // other function calls stay as they are
    const int index = next_++;
    NodeDecision d = decide(e, opts_);
    if (opts_.native_nodes.count(index) && !d.backend.empty()) {
      d.rejections.insert(d.rejections.begin(), {d.backend, "measured placement keeps it native"});
      d.backend.clear();
      d.why.clear();
      if (composite) {
        // The composite's body over the call's arguments (not a walk of the arguments: they hold
        // other nodes' region functions, which must stay as they are).
        const ir::FunctionNode* f = inline_callee(e);
        const auto* ec = e->as<ir::CallNode>();
        std::unordered_map<const ir::ExprNode*, ir::Expr> sub;
        for (size_t i = 0; i < f->params.size(); ++i) sub[f->params[i].get()] = ec->args[i];
        e = substitute(f->body, sub);
      }
    }
    std::string backend = d.backend;
    if (report_) {
      for (const ir::Expr& a : c->args)
        if (a->kind != ir::ExprKind::Constant) d.inputs.push_back({producer(a), tensor_bytes(a->type)});
      d.output_bytes = tensor_bytes(e->type);
      report_->decisions.push_back(std::move(d));
    }
    index_of_[orig.get()] = index;
    if (backend.empty()) return e;
    ir::Expr w = wrap(e, backend);
    if (report_) report_->wrapped_nodes.emplace_back(w->as<ir::CallNode>()->callee, index);
    return w;
  }

 private:
  // The decision index of the node whose value `e` is (through tuple fields), or -1.
  int producer(const ir::Expr& e) const {
    const ir::ExprNode* n = e.get();
    if (auto* g = e->as<ir::TupleGetItemNode>()) n = g->tuple.get();
    auto it = index_of_.find(n);
    return it == index_of_.end() ? -1 : it->second;
  }

  int next_ = 0;
  std::unordered_map<const ir::ExprNode*, int> index_of_;
  const PartitionOptions& opts_;
  PartitionReport* report_;
  std::unordered_set<const ir::ExprNode*> top_;
};

}  // namespace

ir::Module annotate_targets(const ir::Module& m, const PartitionOptions& opts, PartitionReport* report) {
  ir::Module out = m;
  const ir::FunctionNode& main = m.main();
  Annotator a(main.body, opts, report);
  ir::Expr body = a.mutate(main.body);
  a.mark_outputs(main.body);
  if (body != main.body) out.functions["main"] = ir::function(main.params, body, main.attrs);
  return out;
}

}  // namespace sy::partition
