// Measured placement's search: a minimum s-t cut over the region's nodes.
#include "runtime/placement_search.h"

#include <algorithm>
#include <limits>
#include <queue>

#include "support/error.h"

namespace sy::runtime {

namespace {

// Dinic's max flow on a graph of a few hundred nodes at most (a region's nodes).
class MaxFlow {
 public:
  explicit MaxFlow(int n) : adj_(static_cast<size_t>(n)) {}

  void add(int a, int b, double cap) {
    if (cap <= 0) return;
    adj_[static_cast<size_t>(a)].push_back(static_cast<int>(arcs_.size()));
    arcs_.push_back({b, cap});
    adj_[static_cast<size_t>(b)].push_back(static_cast<int>(arcs_.size()));
    arcs_.push_back({a, 0});
  }

  void run(int s, int t) {
    while (levels(s, t)) {
      next_.assign(adj_.size(), 0);
      while (push(s, t, std::numeric_limits<double>::infinity()) > kEps) {
      }
    }
  }

  // The nodes from which t can still be reached through arcs with capacity left: the sink side
  // of the cut that puts as many nodes as possible on the source side.
  std::vector<bool> reaches(int t) const {
    std::vector<bool> seen(adj_.size(), false);
    std::vector<int> stack{t};
    seen[static_cast<size_t>(t)] = true;
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      // An arc u -> v with residual capacity is the reverse of an arc of v's list.
      for (int id : adj_[static_cast<size_t>(v)]) {
        const Arc& back = arcs_[static_cast<size_t>(id ^ 1)];
        int u = arcs_[static_cast<size_t>(id)].to;
        if (back.cap > kEps && !seen[static_cast<size_t>(u)]) {
          seen[static_cast<size_t>(u)] = true;
          stack.push_back(u);
        }
      }
    }
    return seen;
  }

 private:
  struct Arc {
    int to;
    double cap;
  };
  static constexpr double kEps = 1e-12;

  bool levels(int s, int t) {
    level_.assign(adj_.size(), -1);
    std::queue<int> q;
    q.push(s);
    level_[static_cast<size_t>(s)] = 0;
    while (!q.empty()) {
      int v = q.front();
      q.pop();
      for (int id : adj_[static_cast<size_t>(v)]) {
        const Arc& a = arcs_[static_cast<size_t>(id)];
        if (a.cap > kEps && level_[static_cast<size_t>(a.to)] < 0) {
          level_[static_cast<size_t>(a.to)] = level_[static_cast<size_t>(v)] + 1;
          q.push(a.to);
        }
      }
    }
    return level_[static_cast<size_t>(t)] >= 0;
  }

  double push(int v, int t, double f) {
    if (v == t) return f;
    auto& i = next_[static_cast<size_t>(v)];
    for (; i < adj_[static_cast<size_t>(v)].size(); ++i) {
      int id = adj_[static_cast<size_t>(v)][i];
      Arc& a = arcs_[static_cast<size_t>(id)];
      if (a.cap <= kEps || level_[static_cast<size_t>(a.to)] != level_[static_cast<size_t>(v)] + 1) continue;
      double got = push(a.to, t, std::min(f, a.cap));
      if (got > kEps) {
        a.cap -= got;
        arcs_[static_cast<size_t>(id ^ 1)].cap += got;
        return got;
      }
    }
    return 0;
  }

  std::vector<std::vector<int>> adj_;
  std::vector<Arc> arcs_;
  std::vector<int> level_;
  std::vector<size_t> next_;
};

}  // namespace

double placement_cost(const PlacementGraph& g, const std::vector<bool>& on_backend) {
  SY_CHECK(on_backend.size() == g.native.size()) << "a choice for " << on_backend.size() << " of " << g.native.size()
                                                 << " nodes";
  double c = 0;
  for (size_t i = 0; i < on_backend.size(); ++i) c += on_backend[i] ? g.on_backend[i] : g.native[i];
  for (const PlacementGraph::Edge& e : g.edges) {
    const bool a = on_backend[static_cast<size_t>(e.from)];
    const bool b = e.to >= 0 && on_backend[static_cast<size_t>(e.to)];
    if (a != b) c += std::max(0.0, e.transition);
  }
  return c;
}

PlacementChoice cheapest_placement(const PlacementGraph& g) {
  const int n = static_cast<int>(g.native.size());
  SY_CHECK(g.on_backend.size() == g.native.size()) << "costs for " << g.on_backend.size() << " and " << n << " nodes";
  const int s = n, t = n + 1;
  MaxFlow f(n + 2);
  // A node on the source side is on the backend: it cuts node -> t (its backend cost) and a node
  // on the sink side cuts s -> node (its native cost). Both shifted by their smaller one, which
  // every choice pays alike, so that no capacity is negative.
  for (int i = 0; i < n; ++i) {
    const double b = g.on_backend[static_cast<size_t>(i)], nat = g.native[static_cast<size_t>(i)];
    const double low = std::min(b, nat);
    f.add(i, t, b - low);
    f.add(s, i, nat - low);
  }
  for (const PlacementGraph::Edge& e : g.edges) {
    SY_CHECK(e.from >= 0 && e.from < n && e.to < n) << "an edge between nodes " << e.from << " and " << e.to;
    const double tau = std::max(0.0, e.transition);
    if (e.to < 0) {
      f.add(e.from, t, tau);  // the outside is native: crossing iff the node is on the backend
    } else {
      f.add(e.from, e.to, tau);
      f.add(e.to, e.from, tau);
    }
  }
  f.run(s, t);
  std::vector<bool> native_side = f.reaches(t);
  PlacementChoice c;
  for (int i = 0; i < n; ++i) c.on_backend.push_back(!native_side[static_cast<size_t>(i)]);
  c.cost = placement_cost(g, c.on_backend);
  return c;
}

}  // namespace sy::runtime
