// Pass: merge regions.
#include "support/numbered.h"
#include "partition/merge_regions.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ir/visitor.h"
#include "partition/region_util.h"
#include "support/error.h"

namespace sy::partition {

namespace {

using Node = const ir::ExprNode*;

class RegionMerger {
 public:
  RegionMerger(const ir::FunctionNode& main, const PartitionOptions& opts, PartitionReport* report)
      : main_(main), opts_(opts), report_(report) {
    order_ = ir::post_order(main.body);
    for (size_t i = 0; i < order_.size(); ++i) {
      index_[order_[i].get()] = i;
      for (const ir::Expr& in : ir::node_inputs(order_[i])) users_[in.get()].push_back(order_[i].get());
    }
  }

  ir::Expr run() {
    form_regions();
    judge_regions();
    return rebuild();
  }

 private:
  // ---- forming regions (union of units) ----
  void form_regions() {
    for (const ir::Expr& e : order_) {
      std::string b = callee_attr(e, kCompiler);
      if (b.empty()) continue;
      int id = static_cast<int>(members_.size());
      region_of_[e.get()] = id;
      members_.push_back({e.get()});
      backend_.push_back(b);
      auto* c = e->as<ir::CallNode>();
      for (const ir::Expr& a : c->args) {
        auto it = region_of_.find(a.get());
        if (it == region_of_.end()) continue;
        int ra = find(it->second), rb = find(region_of_[e.get()]);
        if (ra == rb || backend_[ra] != backend_[rb]) continue;
        if (!creates_cycle(ra, rb)) unite(ra, rb);
      }
    }
  }

  int find(int r) {
    while (parent_.count(r)) r = parent_[r];
    return r;
  }
  void unite(int a, int b) {
    // Keep the smaller id as the representative so that numbering follows the graph order.
    if (a > b) std::swap(a, b);
    parent_[b] = a;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b].clear();
  }

  // True if a path leaves a or b and re-enters the other through an outside node. Paths run on
  // the graph as it will be rebuilt, where every other region is one node: reaching one member of
  // a region reaches all its users (else a region fed by a and feeding b closes a cycle unseen).
  bool creates_cycle(int a, int b) {
    std::unordered_set<Node> in_a(members_[a].begin(), members_[a].end());
    std::unordered_set<Node> in_b(members_[b].begin(), members_[b].end());
    return reaches_through_outside(in_a, in_b) || reaches_through_outside(in_b, in_a);
  }
  bool reaches_through_outside(const std::unordered_set<Node>& from, const std::unordered_set<Node>& to) {
    std::deque<Node> work;
    std::unordered_set<Node> seen;
    auto reach = [&](Node u) {
      if (from.count(u) || !seen.insert(u).second) return;
      work.push_back(u);
      auto r = region_of_.find(u);
      if (r == region_of_.end()) return;
      for (Node m : members_[static_cast<size_t>(find(r->second))])
        if (!from.count(m) && !to.count(m) && seen.insert(m).second) work.push_back(m);
    };
    for (Node n : from)
      for (Node u : users_[n])
        if (!to.count(u)) reach(u);
    while (!work.empty()) {
      Node n = work.front();
      work.pop_front();
      for (Node u : users_[n]) {
        if (to.count(u)) return true;
        reach(u);
      }
    }
    return false;
  }

  // ---- judging regions ----
  void judge_regions() {
    for (size_t r = 0; r < members_.size(); ++r) {
      if (members_[r].empty()) continue;
      std::sort(members_[r].begin(), members_[r].end(), [&](Node x, Node y) { return index_[x] < index_[y]; });
      backends::RegionSummary s;
      RegionReport rep;
      rep.backend = backend_[r];
      std::unordered_set<Node> inside(members_[r].begin(), members_[r].end());
      for (Node n : members_[r]) {
        const ir::Expr& e = order_[index_[n]];
        const ir::FunctionNode* f = inline_callee(e);
        s.nodes.push_back(f->body);
        OpCount oc = count_ops(f->body);
        s.op_count += oc.ops;
        s.flops += oc.flops;
        rep.ops.insert(rep.ops.end(), oc.names.begin(), oc.names.end());
        for (const ir::Expr& a : e->as<ir::CallNode>()->args)
          if (!inside.count(a.get())) s.boundary_bytes += tensor_bytes(a->type);
        if (escapes(n, inside)) s.boundary_bytes += tensor_bytes(e->type);
      }
      rep.flops = s.flops;
      const backends::Backend* b = backend_named(backend_[r]);
      backends::Verdict v = b->worth_offloading(s);
      rep.offloaded = v.ok;
      rep.why_not = v.reason;
      if (v.ok) offloaded_.insert(static_cast<int>(r));
      if (report_) report_->regions.push_back(std::move(rep));
      if (report_) {
        const int index = static_cast<int>(report_->regions.size()) - 1;
        report_index_[static_cast<int>(r)] = index;
        for_each_decision(r, [&](NodeDecision& d) {
          if (v.ok) {
            d.region = index;
            return;
          }
          // The nodes' decisions now say native, with the backend's reason.
          d.rejections.insert(d.rejections.begin(), {d.backend, "region not offloaded: " + v.reason});
          d.backend.clear();
          d.why.clear();
        });
      }
    }
  }

  // Calls f on the decision of each node of region r (annotate_targets recorded which decision
  // each one-node region function is).
  template <typename F>
  void for_each_decision(size_t r, F f) {
    if (decision_of_.empty())
      for (const auto& [fn, k] : report_->wrapped_nodes) decision_of_[fn.get()] = k;
    for (Node n : members_[r]) {
      auto it = decision_of_.find(inline_callee(order_[index_[n]]));
      SY_CHECK(it != decision_of_.end()) << "a claimed node without its decision";
      f(report_->decisions[static_cast<size_t>(it->second)]);
    }
  }

  bool escapes(Node n, const std::unordered_set<Node>& inside) {
    if (n == main_.body.get()) return true;
    for (Node u : users_[n])
      if (!inside.count(u)) return true;
    return false;
  }

  const backends::Backend* backend_named(const std::string& name) {
    for (const backends::Backend* b : opts_.backends)
      if (b->name() == name) return b;
    SY_CHECK(false) << "region of unselected backend " << name;
    return nullptr;
  }

  // ---- rebuilding @main with one call per offloaded region ----
  // Items are native nodes (index into order_) and offloaded regions (-1 - region id).
  int item_of(Node n) {
    auto it = region_of_.find(n);
    if (it != region_of_.end()) {
      int r = find(it->second);
      if (offloaded_.count(r)) return -1 - r;
    }
    return static_cast<int>(index_[n]);
  }

  ir::Expr rebuild() {
    // Kahn's algorithm over the condensed graph, lowest original position first (deterministic).
    std::map<int, std::vector<int>> deps;  // item -> items it needs
    std::map<int, size_t> first_pos;
    for (size_t i = 0; i < order_.size(); ++i) {
      int it = item_of(order_[i].get());
      if (!first_pos.count(it)) first_pos[it] = i;
      auto& d = deps[it];
      for (const ir::Expr& in : ir::node_inputs(order_[i])) {
        int di = item_of(in.get());
        if (di != it) d.push_back(di);
      }
    }
    std::map<int, std::vector<int>> dependents;
    std::map<int, int> pending;
    for (auto& [it, d] : deps) {
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      pending[it] = static_cast<int>(d.size());
      for (int x : d) dependents[x].push_back(it);
    }
    using QE = std::pair<size_t, int>;
    std::priority_queue<QE, std::vector<QE>, std::greater<QE>> ready;
    for (auto& [it, n] : pending)
      if (n == 0) ready.emplace(first_pos[it], it);
    while (!ready.empty()) {
      int it = ready.top().second;
      ready.pop();
      if (it >= 0) emit_native(order_[static_cast<size_t>(it)]);
      else emit_region(-1 - it);
      for (int u : dependents[it])
        if (--pending[u] == 0) ready.emplace(first_pos[u], u);
    }
    return new_of_.at(main_.body.get());
  }

  const ir::Expr& mapped(const ir::Expr& e) {
    auto it = new_of_.find(e.get());
    SY_CHECK(it != new_of_.end()) << "node rebuilt before its input";
    return it->second;
  }

  void emit_native(const ir::Expr& e) {
    ir::Expr out;
    switch (e->kind) {
      case ir::ExprKind::Call: {
        auto* c = e->as<ir::CallNode>();
        std::vector<ir::Expr> args;
        for (const ir::Expr& a : c->args) args.push_back(mapped(a));
        if (!callee_attr(e, kCompiler).empty()) {
          // A unit of a dissolved region: inline its one node back.
          const ir::FunctionNode* f = inline_callee(e);
          std::unordered_map<Node, ir::Expr> sub;
          for (size_t i = 0; i < f->params.size(); ++i) sub[f->params[i].get()] = args[i];
          out = substitute(f->body, sub);
        } else if (c->is_op()) {
          bool same = true;
          for (size_t i = 0; i < args.size(); ++i) same = same && args[i] == c->args[i];
          out = same ? e : ir::call(c->op, args, c->attrs);
        } else {
          out = ir::call_function(c->callee, args);
        }
        break;
      }
      case ir::ExprKind::Tuple: {
        std::vector<ir::Expr> fs;
        for (const ir::Expr& f : e->as<ir::TupleNode>()->fields) fs.push_back(mapped(f));
        out = ir::tuple(fs);
        break;
      }
      case ir::ExprKind::TupleGetItem: {
        auto* t = e->as<ir::TupleGetItemNode>();
        out = ir::tuple_get_item(mapped(t->tuple), t->index);
        break;
      }
      default:
        out = e;  // vars, constants, globals, functions
    }
    new_of_[e.get()] = out;
  }

  void emit_region(int r) {
    const std::vector<Node>& mem = members_[static_cast<size_t>(r)];
    std::unordered_set<Node> inside(mem.begin(), mem.end());
    std::unordered_map<Node, ir::Expr> inner;
    std::vector<ir::Expr> params, outer_args;
    std::unordered_map<Node, ir::Expr> param_of;
    for (Node n : mem) {
      const ir::Expr& e = order_[index_[n]];
      auto* c = e->as<ir::CallNode>();
      const ir::FunctionNode* f = inline_callee(e);
      std::unordered_map<Node, ir::Expr> sub;
      for (size_t i = 0; i < c->args.size(); ++i) {
        const ir::Expr& a = c->args[i];
        ir::Expr v;
        if (inside.count(a.get())) {
          v = inner.at(a.get());
        } else {
          auto it = param_of.find(a.get());
          if (it == param_of.end()) {
            ir::Expr p = ir::var(numbered("i", static_cast<int64_t>(params.size())), a->type);
            params.push_back(p);
            outer_args.push_back(mapped(a));
            it = param_of.emplace(a.get(), p).first;
          }
          v = it->second;
        }
        sub[f->params[i].get()] = v;
      }
      inner[n] = substitute(f->body, sub);
    }
    std::vector<Node> outs;
    for (Node n : mem)
      if (escapes(n, inside)) outs.push_back(n);
    SY_CHECK(!outs.empty()) << "region without outputs";
    ir::Expr body;
    if (outs.size() == 1) {
      body = inner.at(outs[0]);
    } else {
      std::vector<ir::Expr> fs;
      for (Node o : outs) fs.push_back(inner.at(o));
      body = ir::tuple(fs);
    }
    ir::Expr fn = ir::function(params, body, {{kCompiler, backend_[static_cast<size_t>(r)]}});
    // partition_graph reorders the report's regions and renumbers the decisions' region by this.
    if (report_ && report_index_.count(r)) report_->region_functions.emplace_back(fn, report_index_.at(r));
    ir::Expr call = ir::call_function(fn, outer_args);
    if (outs.size() == 1) {
      new_of_[outs[0]] = call;
    } else {
      for (size_t k = 0; k < outs.size(); ++k) new_of_[outs[k]] = ir::tuple_get_item(call, static_cast<int>(k));
    }
  }

  const ir::FunctionNode& main_;
  const PartitionOptions& opts_;
  PartitionReport* report_;
  std::vector<ir::Expr> order_;
  std::unordered_map<Node, size_t> index_;
  std::unordered_map<Node, std::vector<Node>> users_;
  std::unordered_map<Node, int> region_of_;
  std::vector<std::vector<Node>> members_;
  std::vector<std::string> backend_;
  std::map<int, int> parent_;
  std::unordered_set<int> offloaded_;
  std::map<int, int> report_index_;
  std::unordered_map<const ir::ExprNode*, int> decision_of_;
  std::unordered_map<Node, ir::Expr> new_of_;
};

}  // namespace

ir::Module merge_regions(const ir::Module& m, const PartitionOptions& opts, PartitionReport* report) {
  ir::Module out = m;
  const ir::FunctionNode& main = m.main();
  RegionMerger merger(main, opts, report);
  ir::Expr body = merger.run();
  if (body != main.body) out.functions["main"] = ir::function(main.params, body, main.attrs);
  return out;
}

}  // namespace sy::partition
