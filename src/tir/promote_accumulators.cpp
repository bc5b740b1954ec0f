#include "tir/promote_accumulators.h"

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tir/arith.h"
#include "tir/functor.h"

namespace sy::tir {

namespace {

// GCC keeps about this many vectors in registers; more windows would spill anyway.
constexpr size_t kMaxWindows = 32;

// One access of the buffer: base + window + lane, the lane the variable of a vectorized loop.
struct Access {
  std::vector<Expr> indices;  // as written
  Expr base;                  // of the row-major flat index; invariant in the loop
  int64_t window = 0;
  int64_t lanes = 0;
  Expr lane;
};

class Promoter {
 public:
  Stmt rewrite(const Stmt& s) {
    if (!s) return s;
    if (s->kind == StmtKind::Allocate) {
      local_.insert(s->buffer.get());
      Stmt r = map_stmt(s, [&](const Stmt& c) { return rewrite(c); }, [](const Expr& e) { return e; });
      local_.erase(s->buffer.get());
      return r;
    }
    if (s->kind == StmtKind::For && s->for_kind == ForKind::Serial) {
      std::optional<Stmt> p = promote(s);
      if (p) return *p;
    }
    return map_stmt(s, [&](const Stmt& c) { return rewrite(c); }, [](const Expr& e) { return e; });
  }

 private:
  std::unordered_set<const BufferNode*> local_;  // allocated around the current statement
  int counter_ = 0;

  // A promoted buffer: its base in the loop, and its windows (offset -> lanes).
  struct Plan {
    Expr base;
    std::map<int64_t, Access> windows;  // by offset
  };

  std::optional<Stmt> promote(const Stmt& loop) {
    int64_t trips = 0;
    if (!is_int_const(loop->extent, &trips) || trips < 1) return std::nullopt;
    // Threads inside would share the windows.
    bool threads = false;
    visit_stmt(loop, [&](const Stmt& x) { threads |= x->kind == StmtKind::For && x->for_kind == ForKind::Parallel; });
    if (threads) return std::nullopt;
    // Variables bound inside the loop, the vectorized loops' variables with their extents, and
    // whether every access is unconditional (so the windows read before the loop are in bounds).
    std::unordered_set<const ExprNode*> inner;
    std::unordered_map<const ExprNode*, int64_t> lanes;
    std::unordered_map<const BufferNode*, std::vector<Access>> accesses;
    std::vector<const BufferNode*> order;  // of first access: the output does not depend on addresses
    std::unordered_set<const BufferNode*> rejected;
    auto classify = [&](const Buffer& b, const std::vector<Expr>& idx, bool certain) {
      if (!local_.count(b.get()) || rejected.count(b.get())) return;
      if (!accesses.count(b.get())) order.push_back(b.get());
      std::optional<Access> a = certain && idx.size() == b->shape.size() ? access_of(b, idx, inner, lanes) : std::nullopt;
      if (!a) {
        rejected.insert(b.get());
        return;
      }
      accesses[b.get()].push_back(*a);
    };
    walk(loop, true, inner, lanes, classify);
    // Only buffers the loop writes: a tile only read is not an accumulator.
    std::unordered_set<const BufferNode*> written;
    visit_stmt(loop, [&](const Stmt& x) {
      if (x->kind == StmtKind::Store) written.insert(x->buffer.get());
    });
    std::unordered_map<const BufferNode*, Plan> plans;
    std::vector<const BufferNode*> promoted;
    for (const BufferNode* b : order) {
      if (rejected.count(b) || !written.count(b)) continue;
      std::optional<Plan> p = plan_of(accesses.at(b));
      if (!p) continue;
      plans[b] = *p;
      promoted.push_back(b);
    }
    if (plans.empty()) return std::nullopt;

    // New buffers per window, then the loop with its accesses redirected.
    std::unordered_map<const BufferNode*, Buffer> originals;
    visit_stmt(loop, [&](const Stmt& x) {
      if (x->kind == StmtKind::Store && plans.count(x->buffer.get())) originals[x->buffer.get()] = x->buffer;
    });
    std::map<std::pair<const BufferNode*, int64_t>, Buffer> regs;
    std::vector<std::pair<const BufferNode*, int64_t>> windows;  // in the order of `promoted`
    for (const BufferNode* b : promoted)
      for (auto& [w, a] : plans.at(b).windows) {
        regs[{b, w}] = buffer(b->name + "_acc" + std::to_string(counter_++), b->dtype, Shape{a.lanes});
        windows.push_back({b, w});
      }
    auto redirect = [&](const Buffer& b, const std::vector<Expr>& index) -> std::optional<std::pair<Buffer, Expr>> {
      if (!plans.count(b.get())) return std::nullopt;
      const Access a = *access_of(b, index, inner, lanes);  // as when planned
      return std::make_pair(regs.at({b.get(), a.window}), a.lane);
    };
    ExprFn on_expr = [&](const Expr& e) {
      return mutate_expr(e, [&](const Expr& x) -> Expr {
        if (x->kind != ExprKind::Load) return x;
        auto r = redirect(x->buffer, x->operands);
        return r ? load(r->first, {r->second}) : x;
      });
    };
    StmtFn on_stmt = [&](const Stmt& x) -> Stmt {
      Stmt y = map_stmt(x, on_stmt, on_expr);
      if (y->kind != StmtKind::Store) return y;
      auto r = redirect(y->buffer, y->indices);
      return r ? store(r->first, {r->second}, y->value) : y;
    };
    Stmt body = on_stmt(loop);
    std::vector<Stmt> before, after;
    // The window's copies index the big buffer as one of its accesses did, the lane renamed.
    auto at = [&](const Access& a, const Expr& m) {
      std::vector<Expr> idx;
      for (const Expr& i : a.indices) idx.push_back(substitute(i, VarMap{{a.lane.get(), m}}));
      return idx;
    };
    for (const auto& key : windows) {
      const Buffer& reg = regs.at(key);
      const Buffer& big = originals.at(key.first);
      const Access& a = plans.at(key.first).windows.at(key.second);
      const int64_t n = reg->shape[0];
      Expr m = var("m"), m2 = var("m");
      before.push_back(for_loop(m, int_imm(0), int_imm(n), ForKind::Vectorized, store(reg, {m}, load(big, at(a, m)))));
      after.push_back(for_loop(m2, int_imm(0), int_imm(n), ForKind::Vectorized, store(big, at(a, m2), load(reg, {m2}))));
    }
    std::vector<Stmt> all = before;
    all.push_back(body);
    all.insert(all.end(), after.begin(), after.end());
    Stmt r = seq(all);
    for (const auto& key : windows) r = allocate(regs.at(key), r);
    return r;
  }

  // base + constant + lane, with base free of the loop's variables and lane a vectorized loop's.
  static std::optional<Access> access_of(const Buffer& b, const std::vector<Expr>& indices,
                                         const std::unordered_set<const ExprNode*>& inner,
                                         const std::unordered_map<const ExprNode*, int64_t>& lanes) {
    Expr flat = int_imm(0);
    for (size_t d = 0; d < indices.size(); ++d) flat = flat * int_imm(b->shape[d]) + indices[d];
    LinearForm f = linear_form(flat);
    LinearForm base;
    base.dtype = f.dtype;
    Access a;
    for (const auto& [t, k] : f.terms) {
      if (t->kind == ExprKind::Var && lanes.count(t.get())) {
        if (a.lane || k != 1) return std::nullopt;
        a.lane = t;
        a.lanes = lanes.at(t.get());
        continue;
      }
      bool varies = false;
      visit_expr(t, [&](const Expr& x) { varies |= x->kind == ExprKind::Var && inner.count(x.get()); });
      if (varies) return std::nullopt;
      base.terms.push_back({t, k});
    }
    if (!a.lane || base.terms.empty()) return std::nullopt;  // constant bases: see the header
    a.base = from_linear_form(base);
    a.window = f.constant;
    a.indices = indices;
    return a;
  }

  // One base for all accesses; windows that coincide or are disjoint.
  static std::optional<Plan> plan_of(const std::vector<Access>& as) {
    Plan p;
    p.base = as.front().base;
    for (const Access& a : as) {
      if (!expr_equal(a.base, p.base)) return std::nullopt;
      auto [it, fresh] = p.windows.emplace(a.window, a);
      if (!fresh && it->second.lanes != a.lanes) return std::nullopt;
    }
    if (p.windows.size() > kMaxWindows) return std::nullopt;
    int64_t end = INT64_MIN;
    for (auto& [w, a] : p.windows) {
      if (w < end) return std::nullopt;
      end = w + a.lanes;
    }
    return p;
  }

  // Visits the accesses of local buffers in s; `certain`: s runs whenever the loop's body does.
  template <typename F>
  void walk(const Stmt& s, bool certain, std::unordered_set<const ExprNode*>& inner,
            std::unordered_map<const ExprNode*, int64_t>& lanes, F& classify) {
    if (!s) return;
    auto exprs = [&](const Expr& e) {
      if (!e) return;
      visit_expr(e, [&](const Expr& x) {
        if (x->kind == ExprKind::Load) classify(x->buffer, x->operands, certain);
      });
    };
    switch (s->kind) {
      case StmtKind::For: {
        int64_t n = 0;
        const bool runs = is_int_const(s->min, nullptr) && is_int_const(s->extent, &n) && n >= 1;
        inner.insert(s->var.get());
        int64_t lo = -1;
        if (s->for_kind == ForKind::Vectorized && is_int_const(s->min, &lo) && lo == 0 && runs) lanes[s->var.get()] = n;
        exprs(s->min);
        exprs(s->extent);
        walk(s->body, certain && runs, inner, lanes, classify);
        return;
      }
      case StmtKind::Store:
        exprs(s->value);
        for (const Expr& i : s->indices) exprs(i);
        classify(s->buffer, s->indices, certain);
        return;
      case StmtKind::Seq:
        for (const Stmt& c : s->seq) walk(c, certain, inner, lanes, classify);
        return;
      case StmtKind::IfThenElse:
        exprs(s->cond);
        walk(s->body, false, inner, lanes, classify);
        walk(s->else_body, false, inner, lanes, classify);
        return;
      case StmtKind::LetStmt:
        inner.insert(s->var.get());
        exprs(s->value);
        walk(s->body, certain, inner, lanes, classify);
        return;
      case StmtKind::Allocate:
        walk(s->body, certain, inner, lanes, classify);
        return;
      case StmtKind::ExternCall:
        for (const Buffer& b : s->buffers) classify(b, {}, false);
        for (const Expr& e : s->scalar_args) exprs(e);
        return;
    }
  }
};

}  // namespace

Stmt promote_accumulators(const Stmt& s) { return Promoter().rewrite(s); }

PrimFunc promote_accumulators(PrimFunc f) {
  f.body = promote_accumulators(f.body);
  return f;
}

}  // namespace sy::tir
