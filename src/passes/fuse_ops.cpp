// Pass: fuse ops.
#include "passes/fuse_ops.h"

#include "ops/attrs.h"
#include "ops/op.h"
#include "support/numbered.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/visitor.h"
#include "support/error.h"

namespace sy::passes {

namespace {

using ops::OpKind;
using Node = const ir::ExprNode*;

bool is_anchor(OpKind k) { return k == OpKind::Reduce || k == OpKind::OutEWiseFusable; }

struct Group {
  std::vector<Node> nodes;  // producers first
  bool has_anchor = false;
  bool closed = false;      // opaque or tuple-valued: nothing joins
  bool interpolates = false;  // holds a linear or cubic resize (several taps per output)
  OpKind strongest = OpKind::Elemwise;
};

// A resize that mixes several input elements into each output. Two in one group, the first is
// inlined into every tap of the second: a 3-D cubic resize (a resize of the planes, then of the
// depths) became 6 MB of C, 256 copies of the first one's taps per element, which GCC did not
// compile in minutes. Each such resize after the first starts a group of its own.
bool interpolates(const ir::CallNode& c) {
  return c.op == ops::OpCode::Resize2d && c.attrs_as<ops::Resize2dAttrs>().mode != "nearest";
}

class Fuser {
 public:
  Fuser(const ir::FunctionNode& main, const FuseOptions& opts) : main_(main), opts_(opts) {
    order_ = ir::post_order(main.body);
    for (const ir::Expr& e : order_) {
      by_node_[e.get()] = e;
      for (const ir::Expr& in : ir::node_inputs(e)) ++uses_[in.get()];
    }
    ++uses_[main.body.get()];
  }

  ir::Expr run() {
    form_groups();
    join_diamonds();
    return rebuild();
  }

 private:
  static const ir::CallNode* op_call(const ir::Expr& e) {
    auto* c = e->as<ir::CallNode>();
    return c && c->is_op() ? c : nullptr;
  }

  void form_groups() {
    for (const ir::Expr& e : order_) {
      const ir::CallNode* c = op_call(e);
      if (!c) continue;
      OpKind k = ops::op_def(c->op).kind;
      bool tuple_valued = !ir::is_tensor(e->type);
      int g = new_group(e.get(), k, tuple_valued || k == OpKind::Opaque);
      if (groups_[g].closed) continue;
      groups_[g].interpolates = interpolates(*c);
      // Join the group of one producer, if the rules allow it.
      for (const ir::Expr& a : c->args) {
        auto it = group_of_.find(a.get());
        if (it == group_of_.end() || uses_[a.get()] != 1) continue;
        int pg = it->second;
        if (pg == g || !can_join(groups_[pg], k, groups_[g])) continue;
        if (groups_[pg].interpolates && groups_[g].interpolates) continue;
        merge(pg, g);
        g = pg;
        break;
      }
    }
  }

  // A value used by several ops of one elementwise group (x * sigmoid(x), SiLU: x feeds both the
  // sigmoid and the multiply) is not single-use, so the greedy pass leaves that group apart from
  // x's producer, and x makes a round trip through memory. Such a group joins the producer's as
  // its epilogue when every use of the producer's root is in it, its ops are elementwise (or
  // broadcasts of x's shape) and it keeps x's shape: the producer's root then has no other
  // reader, so nothing outside can need it, and the anchor's schedule sees a plain epilogue.
  void join_diamonds() {
    for (const ir::Expr& e : order_) {
      auto hit = group_of_.find(e.get());
      if (hit == group_of_.end()) continue;
      const int h = hit->second;
      Group& H = groups_[static_cast<size_t>(h)];
      if (H.nodes.empty() || H.nodes.front() != e.get() || H.closed || H.has_anchor) continue;
      if (H.strongest != OpKind::Elemwise && H.strongest != OpKind::Broadcast) continue;
      // The producer: the group of a root that H's nodes read several times (the first such root
      // in H's order of reads, so that the choice does not depend on addresses).
      std::vector<std::pair<Node, int>> reads;
      for (Node n : H.nodes)
        for (const ir::Expr& a : ir::node_inputs(by_node_.at(n))) {
          if (!group_of_.count(a.get()) || group_of_.at(a.get()) == h) continue;
          auto it = std::find_if(reads.begin(), reads.end(), [&](const auto& x) { return x.first == a.get(); });
          if (it == reads.end()) reads.emplace_back(a.get(), 1);
          else ++it->second;
        }
      for (const auto& [r, count] : reads) {
        const int g = group_of_.at(r);
        Group& G = groups_[static_cast<size_t>(g)];
        if (count < 2 || count != uses_.at(r) || G.closed || G.nodes.back() != r) continue;
        if (static_cast<int>(G.nodes.size() + H.nodes.size()) > opts_.max_group_ops) continue;
        const Shape& rs = ir::as_tensor(by_node_.at(r)->type).shape;
        bool same_shape = true;
        for (Node n : H.nodes) same_shape &= ir::is_tensor(by_node_.at(n)->type) && ir::as_tensor(by_node_.at(n)->type).shape == rs;
        if (!same_shape) continue;
        merge(g, h);
        break;
      }
    }
  }

  int new_group(Node n, OpKind k, bool closed) {
    Group gr;
    gr.nodes.push_back(n);
    gr.has_anchor = is_anchor(k);
    gr.closed = closed;
    gr.strongest = k;
    groups_.push_back(gr);
    int id = static_cast<int>(groups_.size()) - 1;
    group_of_[n] = id;
    return id;
  }

  // Whether a consumer op of kind k (alone in its group `self`) may join producer group p.
  bool can_join(const Group& p, OpKind k, const Group& self) const {
    if (p.closed || self.nodes.size() != 1) return false;
    if (static_cast<int>(p.nodes.size()) >= opts_.max_group_ops) return false;
    switch (k) {
      case OpKind::Elemwise:
      case OpKind::Broadcast:
        return true;  // epilogue of anything open
      case OpKind::Injective:
        return !p.has_anchor;  // injective chains, not after a conv or a reduction
      case OpKind::Reduce:
        return !p.has_anchor;  // takes an elementwise/injective prologue
      case OpKind::OutEWiseFusable:
      case OpKind::Opaque:
        return false;
    }
    return false;
  }

  void merge(int into, int from) {
    Group& a = groups_[static_cast<size_t>(into)];
    Group& b = groups_[static_cast<size_t>(from)];
    for (Node n : b.nodes) {
      a.nodes.push_back(n);
      group_of_[n] = into;
    }
    a.has_anchor = a.has_anchor || b.has_anchor;
    a.interpolates = a.interpolates || b.interpolates;
    if (b.strongest > a.strongest) a.strongest = b.strongest;
    b.nodes.clear();
  }

  // Rebuilds @main: each group becomes fn(params) attrs {Primitive="1"} { nodes }(args) placed at
  // its root (the group's last node, its only value used outside).
  ir::Expr rebuild() {
    std::unordered_map<Node, ir::Expr> new_of;
    for (const ir::Expr& e : order_) {
      auto git = group_of_.find(e.get());
      if (git != group_of_.end()) {
        const Group& g = groups_[static_cast<size_t>(git->second)];
        if (g.nodes.back() == e.get()) new_of[e.get()] = outline(g, new_of);
        continue;  // interior nodes are built inside their group's function
      }
      new_of[e.get()] = rebuild_plain(e, new_of);
    }
    return new_of.at(main_.body.get());
  }

  ir::Expr outline(const Group& g, const std::unordered_map<Node, ir::Expr>& outer) {
    std::unordered_set<Node> inside(g.nodes.begin(), g.nodes.end());
    std::unordered_map<Node, ir::Expr> inner;
    std::vector<ir::Expr> params, args;
    for (Node n : g.nodes) {
      const ir::CallNode* c = by_node_.at(n)->as<ir::CallNode>();
      std::vector<ir::Expr> in_args;
      for (const ir::Expr& a : c->args) {
        if (inside.count(a.get())) {
          in_args.push_back(inner.at(a.get()));
          continue;
        }
        auto it = inner.find(a.get());
        if (it == inner.end()) {
          ir::Expr p = ir::var(numbered("p", static_cast<int64_t>(params.size())), a->type);
          params.push_back(p);
          args.push_back(outer.at(a.get()));
          it = inner.emplace(a.get(), p).first;
        }
        in_args.push_back(it->second);
      }
      inner[n] = ir::call(c->op, in_args, c->attrs);
    }
    ir::Expr fn = ir::function(params, inner.at(g.nodes.back()), {{"Primitive", "1"}});
    return ir::call_function(fn, args);
  }

  static ir::Expr rebuild_plain(const ir::Expr& e, const std::unordered_map<Node, ir::Expr>& m) {
    auto get = [&](const ir::Expr& x) { return m.at(x.get()); };
    switch (e->kind) {
      case ir::ExprKind::Call: {
        auto* c = e->as<ir::CallNode>();
        std::vector<ir::Expr> args;
        for (const ir::Expr& a : c->args) args.push_back(get(a));
        return ir::call_function(c->callee->kind == ir::ExprKind::GlobalVar ? c->callee : get(c->callee), args);
      }
      case ir::ExprKind::Tuple: {
        std::vector<ir::Expr> fs;
        for (const ir::Expr& f : e->as<ir::TupleNode>()->fields) fs.push_back(get(f));
        return ir::tuple(fs);
      }
      case ir::ExprKind::TupleGetItem: {
        auto* t = e->as<ir::TupleGetItemNode>();
        return ir::tuple_get_item(get(t->tuple), t->index);
      }
      default:
        return e;  // vars, constants, globals, function callees
    }
  }

  const ir::FunctionNode& main_;
  const FuseOptions& opts_;
  std::vector<ir::Expr> order_;
  std::unordered_map<Node, ir::Expr> by_node_;
  std::unordered_map<Node, int> uses_;
  std::vector<Group> groups_;
  std::unordered_map<Node, int> group_of_;
};

}  // namespace

ir::Module fuse_ops(const ir::Module& m, const FuseOptions& opts) {
  ir::Module out = m;
  const ir::FunctionNode& main = m.main();
  Fuser f(main, opts);
  out.functions["main"] = ir::function(main.params, f.run(), main.attrs);
  return out;
}

}  // namespace sy::passes
