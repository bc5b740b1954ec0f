#include "native/kept_layouts.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <unordered_map>

#include "ir/visitor.h"
#include "native/compile.h"
#include "native/hooked_regions.h"
#include "native/plan.h"
#include "support/error.h"
#include "support/tensor.h"
#include "topi/topi.h"

namespace sy::native {

namespace {

// A kernel's time with its layouts kept above its time alone by more than this factor is its
// own, not the noise of two medians timed side by side (they differ by a few percent).
constexpr double kKeptSlowerBeyondNoise = 1.10;

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

class AttrSetter : public ir::ExprMutator {
 public:
  explicit AttrSetter(std::unordered_map<const ir::ExprNode*, ir::FuncAttrs> value) : value_(std::move(value)) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    auto it = value_.find(orig.get());
    if (it == value_.end()) return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
    const auto* f = c->callee->as<ir::FunctionNode>();
    ir::FuncAttrs attrs = f->attrs;
    for (const auto& [k, v] : it->second) attrs[k] = v;
    return ir::call_function(ir::function(f->params, f->body, attrs), std::move(args));
  }

 private:
  std::unordered_map<const ir::ExprNode*, ir::FuncAttrs> value_;
};

}  // namespace

ir::Expr without_kept_layout(const ir::FunctionNode& fn) {
  ir::FuncAttrs attrs = fn.attrs;
  if (attrs.count(topi::kKeptLayoutAttr)) attrs.erase(kInPlaceAttr);
  attrs.erase(topi::kKeptLayoutAttr);
  attrs.erase(kChosenInChainAttr);
  if (attrs.erase(kChosenWithLayoutsAttr)) {
    attrs.erase(strategy::kImplementationAttr);
    attrs.erase(strategy::kKnobsAttr);
  }
  return ir::function(fn.params, fn.body, attrs);
}

namespace {

double bytes_of(const ir::Type& t) {
  return ir::is_tensor(t) ? static_cast<double>(shape_numel(ir::as_tensor(t).shape) * static_cast<int64_t>(dtype_size(ir::as_tensor(t).dtype)))
                          : 0;
}

// The model's calls and who reads their values.
struct Graph {
  std::vector<const ir::CallNode*> fcalls;
  std::unordered_map<const ir::ExprNode*, size_t> index;
  struct Use {
    size_t call;
    int param;
  };
  std::vector<std::vector<Use>> uses;
  std::vector<bool> escapes;  // read by something else (the model's result, a tuple, a region)

  std::optional<size_t> producer(size_t i, int p) const {
    auto it = index.find(fcalls[i]->args[static_cast<size_t>(p)].get());
    if (it == index.end()) return std::nullopt;
    return it->second;
  }

  // Which results stay in their layout, given what each call can keep: every result that could
  // be, less those a reader cannot take, until none changes. A result is kept only with its
  // result_needs parameters kept; a with_result parameter is taken only while the reader's own
  // result is kept.
  std::vector<bool> kept(const std::vector<topi::KeptLayoutSupport>& can) const {
    const size_t n = fcalls.size();
    std::vector<bool> k(n, false);
    for (size_t i = 0; i < n; ++i) k[i] = !can[i].layout.empty() && can[i].result && !escapes[i];
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < n; ++i) {
        if (!k[i]) continue;
        bool ok = true;
        for (const Use& u : uses[i]) {
          const topi::KeptLayoutSupport& r = can[u.call];
          ok &= r.layout == can[i].layout && (contains(r.params, u.param) || (contains(r.with_result, u.param) && k[u.call]));
        }
        for (int p : can[i].result_needs) {
          std::optional<size_t> j = producer(i, p);
          ok &= j && k[*j] && can[*j].layout == can[i].layout;
        }
        if (!ok) {
          k[i] = false;
          changed = true;
        }
      }
    }
    return k;
  }
};

Graph graph_of(const ir::Module& fused) {
  Graph g;
  g.fcalls = primitive_calls(fused);
  const size_t n = g.fcalls.size();
  for (size_t i = 0; i < n; ++i) g.index[g.fcalls[i]] = i;
  g.uses.resize(n);
  g.escapes.assign(n, false);
  const ir::FunctionNode& main = fused.main();
  for (const ir::Expr& e : ir::post_order(main.body)) {
    auto escape = [&](const ir::Expr& x) {
      if (auto it = g.index.find(x.get()); it != g.index.end()) g.escapes[it->second] = true;
    };
    if (auto* c = e->as<ir::CallNode>()) {
      auto self = g.index.find(e.get());
      for (size_t a = 0; a < c->args.size(); ++a) {
        auto it = g.index.find(c->args[a].get());
        if (it == g.index.end()) continue;
        if (self == g.index.end())
          g.escapes[it->second] = true;
        else
          g.uses[it->second].push_back({self->second, static_cast<int>(a)});
      }
    } else if (auto* tu = e->as<ir::TupleNode>()) {
      for (const ir::Expr& f : tu->fields) escape(f);
    } else if (auto* gi = e->as<ir::TupleGetItemNode>()) {
      escape(gi->tuple);
    }
  }
  if (auto it = g.index.find(main.body.get()); it != g.index.end()) g.escapes[it->second] = true;
  return g;
}

// A call's two options when records measured both: its best implementation that keeps nothing,
// and its best one that can keep layouts, alone (ms, with its reorders) and kept (kept_ms).
struct Options {
  bool decided = false;
  double best_ms = 0;  // the records' own choice, alone: what runs where a keeping option keeps nothing
  strategy::Choice::Cost plain, keeping;
  topi::KeptLayoutSupport keeping_can;
  std::vector<double> param_bytes;  // of the keeping option's parameters that may be kept
  double result_bytes = 0;
};

// What impl can keep for fn; where records chose (from_record), not the channel-blocked layout of
// a native implementation (conv2d.blocked): the records' weighing below sets one keeping option
// against one plain option per call, and conv2d.blocked keeping would leave a call whose records
// chose it no plain option. So that layout is kept along the defaults' conv2d.blocked calls only.
topi::KeptLayoutSupport support_of(const topi::OpImpl& impl, const ir::FunctionNode& fn, const target::Target& t,
                                   bool from_record) {
  if (!impl.kept_layouts) return {};
  topi::KeptLayoutSupport s = impl.kept_layouts(fn, t);
  if (from_record && impl.library.empty() && topi::blocked_layout_block(s.layout) > 0) return {};
  return s;
}

// Per call, the implementation it takes as part of a chain (topi::ChainRole), or null: where no
// record chose for the call, an implementation with a chain role that applies and keeps the
// layout with its neighbours (see the pruning below).
std::vector<const topi::OpImpl*> chain_implementations(const Graph& g, const target::Target& t,
                                                       const std::vector<bool>& recorded) {
  const size_t n = g.fcalls.size();
  std::vector<const topi::OpImpl*> impl(n, nullptr);
  std::vector<topi::ChainRole> role(n, topi::ChainRole::None);
  for (size_t i = 0; i < n; ++i) {
    const auto* fn = g.fcalls[i]->callee->as<ir::FunctionNode>();
    if (fn->attrs.count(kFallbackAttr) || fn->attrs.count(kLoweredByAttr) || !ir::is_tensor(fn->body->type)) continue;
    const ir::CallNode* anchor = strategy::anchor_of(*fn);
    if (!anchor || recorded[i]) continue;
    for (const topi::OpImpl* cand : strategy::implementations(anchor->op)) {
      if (!cand->chain_role || !cand->kept_layouts || (cand->why_not && !cand->why_not(*anchor, t).empty())) continue;
      const topi::ChainRole r = cand->chain_role(*fn, t);
      if (r == topi::ChainRole::None) continue;
      impl[i] = cand;
      role[i] = r;
      break;
    }
  }
  // Chains: the calls connected through values they could pass in their layout, where one of
  // them links or pairs. Then, until none changes: a linking call whose data comes plain or
  // whose result goes plain would reorder inside, a lane at a time, at a cost larger than what
  // it saves; it leaves the chain, and so does a joining or pairing call that would keep neither
  // its data nor its result.
  std::vector<size_t> comp(n);
  for (size_t i = 0; i < n; ++i) comp[i] = i;
  std::function<size_t(size_t)> root = [&](size_t i) { return comp[i] == i ? i : comp[i] = root(comp[i]); };
  for (size_t i = 0; i < n; ++i)
    if (impl[i])
      for (const Graph::Use& u : g.uses[i])
        if (impl[u.call]) comp[root(i)] = root(u.call);
  // Without a link, only the calls that pair stay: a joining call next to them would only move
  // the reorder into a kernel that is no faster for it.
  std::vector<bool> has_link(n, false);
  for (size_t i = 0; i < n; ++i)
    if (impl[i] && role[i] == topi::ChainRole::Links) has_link[root(i)] = true;
  for (size_t i = 0; i < n; ++i)
    if (impl[i] && !has_link[root(i)] && role[i] != topi::ChainRole::Pairs) impl[i] = nullptr;
  std::vector<const topi::OpImpl*> out = impl;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<topi::KeptLayoutSupport> can(n);
    for (size_t i = 0; i < n; ++i)
      if (out[i]) can[i] = out[i]->kept_layouts(*g.fcalls[i]->callee->as<ir::FunctionNode>(), t);
    const std::vector<bool> kept = g.kept(can);
    for (size_t i = 0; i < n; ++i) {
      if (!out[i]) continue;
      const auto* fn = g.fcalls[i]->callee->as<ir::FunctionNode>();
      const ir::CallNode* anchor = strategy::anchor_of(*fn);
      bool data_kept = false, any_kept = kept[i];
      for (size_t p = 0; p < fn->params.size(); ++p) {
        std::optional<size_t> j = g.producer(i, static_cast<int>(p));
        const bool k = j && kept[*j];
        any_kept |= k;
        if (fn->params[p].get() == anchor->args[0].get()) data_kept = k;
      }
      const bool ok = role[i] == topi::ChainRole::Links ? data_kept && kept[i] : any_kept;
      if (!ok) {
        out[i] = nullptr;
        changed = true;
      }
    }
  }
  return out;
}

}  // namespace

ir::Module keep_layouts(const ir::Module& fused, const target::Target& t, const strategy::Chooser& chooser,
                        bool keep_all) {
  // Before prepacking every weight once more (half a second of ResNet-50's compile): whether any call
  // may take an implementation that keeps layouts. Without a chooser only by the strategy's
  // order, which needs no packed weights to tell.
  const Graph g = graph_of(fused);
  const size_t n = g.fcalls.size();
  // With a chooser, what records chose stands: asked of the functions as planned (weights
  // packed, as the records' workload keys hash them). Whether any impl keeps layouts then needs
  // no asking: conv2d.nhwc does.
  ir::Module packed;
  std::vector<const ir::CallNode*> pcalls;
  auto pack = [&] {
    packed = topi::prepack_constants(fused, t);
    pcalls = primitive_calls(packed);
    SY_CHECK(g.fcalls.size() == pcalls.size()) << "prepacking changed the calls";
  };
  std::vector<bool> recorded(n, false);
  if (chooser) {
    pack();
    for (size_t i = 0; i < n; ++i) {
      const auto* fn = pcalls[i]->callee->as<ir::FunctionNode>();
      // A target hook's kernel (its own lowering, constants inline) has no record to ask for.
      if (fn->attrs.count(kLoweredByAttr)) continue;
      if (const ir::CallNode* anchor = strategy::anchor_of(*fn))
        if (std::optional<strategy::Choice> c = chooser(*fn, *anchor, t)) recorded[i] = c->from_record;
    }
  }
  const std::vector<const topi::OpImpl*> chain = chain_implementations(g, t, recorded);
  bool possible = std::any_of(chain.begin(), chain.end(), [](const topi::OpImpl* i) { return i != nullptr; });
  for (const ir::CallNode* c : primitive_calls(fused)) {
    const auto* fn = c->callee->as<ir::FunctionNode>();
    const ir::CallNode* anchor = strategy::anchor_of(*fn);
    if (!anchor) continue;
    if (chooser) {
      for (const topi::OpImpl* impl : strategy::implementations(anchor->op)) possible |= static_cast<bool>(impl->kept_layouts);
    } else if (std::optional<strategy::Choice> d = strategy::choose(*fn, t, nullptr)) {
      const topi::OpImpl* impl = strategy::implementation_named(anchor->op, d->implementation);
      possible |= impl && impl->kept_layouts;
    }
  }
  if (!possible) return fused;
  if (!chooser) pack();

  // What each call's chosen implementation can keep, and the two options of the calls whose
  // records measured both.
  std::vector<topi::KeptLayoutSupport> can(n);
  std::vector<Options> opt(n);
  std::vector<bool> keeping(n, false);  // the call takes its keeping option
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    const auto* fn = pcalls[i]->callee->as<ir::FunctionNode>();
    if (fn->attrs.count(kFallbackAttr) || fn->attrs.count(kLoweredByAttr) || !ir::is_tensor(fn->body->type)) continue;
    const ir::CallNode* anchor = strategy::anchor_of(*fn);
    if (!anchor) continue;
    if (chain[i]) {
      can[i] = chain[i]->kept_layouts(*fn, t);
      keeping[i] = any = true;
      continue;
    }
    std::optional<strategy::Choice> c = strategy::choose(*fn, t, chooser);
    if (!c) continue;
    if (const topi::OpImpl* impl = strategy::implementation_named(anchor->op, c->implementation); impl && impl->kept_layouts) {
      can[i] = support_of(*impl, *fn, t, c->from_record);
      keeping[i] = !can[i].layout.empty();
    }
    any |= keeping[i];
    Options& o = opt[i];
    for (const strategy::Choice::Cost& cost : c->costs) {
      const topi::OpImpl* impl = strategy::implementation_named(anchor->op, cost.implementation);
      if (!impl) continue;
      topi::KeptLayoutSupport k = support_of(*impl, *fn, t, true);
      if (k.layout.empty()) {
        if (o.plain.implementation.empty() || cost.ms < o.plain.ms) o.plain = cost;
      } else if (cost.kept_ms > 0 && (o.keeping.implementation.empty() || cost.kept_ms < o.keeping.kept_ms)) {
        o.keeping = cost;
        o.keeping_can = k;
      }
    }
    o.decided = !o.plain.implementation.empty() && !o.keeping.implementation.empty();
    if (!c->costs.empty()) o.best_ms = c->costs.front().ms;
    if (o.decided) {
      for (size_t p = 0; p < fn->params.size(); ++p)
        o.param_bytes.push_back(contains(o.keeping_can.params, static_cast<int>(p)) ||
                                        contains(o.keeping_can.with_result, static_cast<int>(p))
                                    ? bytes_of(fn->params[p]->type)
                                    : 0);
      o.result_bytes = o.keeping_can.result ? bytes_of(fn->body->type) : 0;
      any = true;
    }
  }
  if (!any) return fused;

  // Where records measured both options, choose them together (the reorders a keeping call
  // saves depend on its neighbours' choices): a keeping call costs its time with its layouts
  // kept, plus its reorders' share (alone minus kept) of the bytes that its neighbours leave
  // plain. A local search from the records' own choices, and from every call keeping; the
  // cheaper of the two.
  auto supports = [&](const std::vector<bool>& k) {
    std::vector<topi::KeptLayoutSupport> s = can;
    for (size_t i = 0; i < n; ++i)
      if (opt[i].decided) s[i] = k[i] ? opt[i].keeping_can : topi::KeptLayoutSupport{};
    return s;
  };
  auto cost = [&](const std::vector<bool>& k) {
    const std::vector<topi::KeptLayoutSupport> s = supports(k);
    const std::vector<bool> res = g.kept(s);
    double total = 0;
    for (size_t i = 0; i < n; ++i) {
      const Options& o = opt[i];
      if (!o.decided) continue;
      if (!k[i]) {
        total += o.plain.ms;
        continue;
      }
      double plain_bytes = res[i] ? 0 : o.result_bytes, all = o.result_bytes;
      for (size_t p = 0; p < o.param_bytes.size(); ++p) {
        all += o.param_bytes[p];
        std::optional<size_t> j = g.producer(i, static_cast<int>(p));
        if (!(j && res[*j])) plain_bytes += o.param_bytes[p];
      }
      // Keeping nothing, the call runs the records' own choice, the best alone (see below).
      // Kept, the option costs its kept time; in between, its reorders' share of the bytes left
      // plain. Keeping saves the reorders, so a kept time a little above alone is noise and
      // counts as alone; far above, it is the kernel's own (a kept layout can be slower: kept
      // NHWC with 512 channels, a conv's window of input pixels once fell into a few L1 sets,
      // 1.45 ms kept against 0.74 alone, and ran 1.9 ms in ResNet-50 costed as 0.74).
      if (all > 0 && plain_bytes >= all && o.best_ms > 0) {
        total += o.best_ms;
        continue;
      }
      const double kept_ms = o.keeping.kept_ms > o.keeping.ms * kKeptSlowerBeyondNoise ? o.keeping.kept_ms
                                                                                      : std::min(o.keeping.kept_ms, o.keeping.ms);
      total += kept_ms + (all > 0 ? (o.keeping.ms - kept_ms) * plain_bytes / all : 0);
    }
    return total;
  };
  std::vector<bool> fixed(n, false);  // keeping without weighing
  for (size_t i = 0; i < n; ++i) fixed[i] = opt[i].decided && (keep_all || opt[i].keeping.chain);
  auto descend = [&](std::vector<bool> k) {
    double best = cost(k);
    for (int pass = 0; pass < 20; ++pass) {
      bool improved = false;
      for (size_t i = 0; i < n; ++i) {
        if (!opt[i].decided || fixed[i]) continue;
        k[i] = !k[i];
        const double c = cost(k);
        if (c < best - 1e-9) {
          best = c;
          improved = true;
        } else {
          k[i] = !k[i];
        }
      }
      if (!improved) break;
    }
    return std::make_pair(best, k);
  };
  std::vector<bool> start = keeping, all_keeping = keeping;
  for (size_t i = 0; i < n; ++i)
    if (opt[i].decided) {
      start[i] = keeping[i] || fixed[i];
      all_keeping[i] = true;
    }
  auto [c1, k1] = descend(start);
  auto [c2, k2] = descend(all_keeping);
  const std::vector<bool> chosen = c2 < c1 ? k2 : k1;
  can = supports(chosen);
  const std::vector<bool> kept = g.kept(can);

  std::unordered_map<const ir::ExprNode*, ir::FuncAttrs> attr;
  for (size_t i = 0; i < n; ++i) {
    topi::KeptLayout k;
    k.layout = can[i].layout;
    k.result = kept[i];
    for (size_t p = 0; p < g.fcalls[i]->args.size(); ++p)
      if (std::optional<size_t> j = g.producer(i, static_cast<int>(p)); j && kept[*j]) k.params.push_back(static_cast<int>(p));
    const bool keeps = k.result || !k.params.empty();
    // A keeping option that keeps nothing here runs as it was timed alone: the records' own
    // choice, the best alone, stands.
    if (opt[i].decided && (keeps || !chosen[i])) {
      const strategy::Choice::Cost& c = chosen[i] ? opt[i].keeping : opt[i].plain;
      ir::FuncAttrs& a = attr[g.fcalls[i]];
      a[strategy::kImplementationAttr] = c.implementation;
      a[strategy::kKnobsAttr] = c.knobs;
      char buf[240];
      std::snprintf(buf, sizeof buf, "chosen with its neighbours' layouts%s: %s %.4g ms kept (%.4g alone), %s %.4g ms",
                    fixed[i] ? (keep_all ? " (all keeping)" : " (the model ran faster keeping, end to end)") : "",
                    opt[i].keeping.implementation.c_str(), opt[i].keeping.kept_ms, opt[i].keeping.ms,
                    opt[i].plain.implementation.c_str(), opt[i].plain.ms);
      a[kChosenWithLayoutsAttr] = buf;
    }
    if (!keeps) continue;
    if (chain[i]) {
      // Taken only keeping: alone (plain in and out) the strategy's choice is faster.
      ir::FuncAttrs& a = attr[g.fcalls[i]];
      a[strategy::kImplementationAttr] = chain[i]->name;
      a[kChosenWithLayoutsAttr] = "in a chain keeping " + k.layout + ", no record";
      a[kChosenInChainAttr] = "1";
    }
    attr[g.fcalls[i]][topi::kKeptLayoutAttr] = topi::kept_layout_str(k);
    // The planner decides whether the storage can be shared (nothing reads the input after).
    if (k.result && can[i].in_place >= 0 && contains(k.params, can[i].in_place))
      attr[g.fcalls[i]][kInPlaceAttr] = std::to_string(can[i].in_place);
  }
  return attr.empty() ? fused : with_call_attrs(fused, std::move(attr));
}

ir::Module with_call_attrs(const ir::Module& fused, std::unordered_map<const ir::ExprNode*, ir::FuncAttrs> attrs) {
  ir::Module out = fused;
  AttrSetter setter(std::move(attrs));
  const ir::FunctionNode& main = fused.main();
  out.functions["main"] = ir::function(main.params, setter.mutate(main.body), main.attrs);
  return out;
}

}  // namespace sy::native
