// Planning: values, calls, kernel dedup, liveness and storage reuse.
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/numbered.h"
#include "native/plan.h"

#include "native/hooked_regions.h"

#include "strategy/strategy.h"
#include "topi/topi.h"

#include <algorithm>
#include <unordered_map>

#include "ir/structural_equal.h"
#include "ir/visitor.h"
#include "support/error.h"

namespace sy::native {

int64_t Value::nbytes() const {
  int64_t n = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

constexpr int64_t kAlign = 64;

int64_t aligned(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// A fused function that only reinterprets its input's bytes (reshape): no kernel needed.
bool is_pure_reshape(const ir::FunctionNode& f) {
  auto* c = f.body->as<ir::CallNode>();
  return c && c->is_op() && c->op == ops::OpCode::Reshape && f.params.size() == 1 && c->args.size() == 1 &&
         c->args[0] == f.params[0];
}

// For a fused function that only concatenates its parameters, each one once, along an axis with
// nothing but 1s before it, all in the plain layout: for each parameter, the byte offset of its
// part in the result (a contiguous piece, as its bytes lie in its own buffer). Empty for any
// other function. (A value kept in a layout between kernels, topi::kKeptLayoutAttr, may be NHWC,
// where a part is a piece of every pixel.)
std::vector<int64_t> concat_offsets(const ir::FunctionNode& f) {
  if (f.attrs.count(topi::kKeptLayoutAttr)) return {};
  auto* c = f.body->as<ir::CallNode>();
  if (!c || !c->is_op() || c->op != ops::OpCode::Concat || c->args.size() != f.params.size() || !ir::is_tensor(c->type))
    return {};
  const ir::TypeNode& y = ir::as_tensor(c->type);
  const int64_t rank = static_cast<int64_t>(y.shape.size());
  int64_t axis = c->attrs_as<ops::AxisAttrs>().axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return {};
  for (int64_t d = 0; d < axis; ++d)
    if (y.shape[static_cast<size_t>(d)] != 1) return {};
  std::vector<int64_t> offsets(f.params.size(), -1);
  int64_t at = 0;
  for (const ir::Expr& a : c->args) {
    auto p = std::find(f.params.begin(), f.params.end(), a);
    if (p == f.params.end() || !ir::is_tensor(a->type)) return {};
    int64_t& o = offsets[static_cast<size_t>(p - f.params.begin())];
    if (o >= 0) return {};  // a parameter twice: one buffer cannot be in two places
    o = at;
    int64_t n = static_cast<int64_t>(dtype_size(y.dtype));
    for (int64_t d : ir::as_tensor(a->type).shape) n *= d;
    at += n;
  }
  return offsets;
}

class Planner {
 public:
  explicit Planner(const ir::Module& m) : m_(m) {}

  Plan run() {
    const ir::FunctionNode& main = m_.main();
    for (size_t i = 0; i < main.params.size(); ++i) {
      int v = new_value(main.params[i]->type);
      p_.values[static_cast<size_t>(v)].kind = ValueKind::Input;
      p_.values[static_cast<size_t>(v)].index = static_cast<int>(i);
      p_.inputs.push_back(v);
      vals_[main.params[i].get()] = {v};
    }
    for (const ir::Expr& e : ir::post_order(main.body)) visit(e);
    p_.outputs = vals_.at(main.body.get());
    mark_outputs();
    plan_memory();
    return std::move(p_);
  }

 private:
  int new_value(const ir::Type& t) {
    const ir::TypeNode& tt = ir::as_tensor(t);
    Value v;
    v.dtype = tt.dtype;
    v.shape = tt.shape;
    p_.values.push_back(v);
    return static_cast<int>(p_.values.size()) - 1;
  }

  std::vector<int> new_values(const ir::Type& t) {
    std::vector<int> out;
    if (ir::is_tensor(t)) {
      out.push_back(new_value(t));
    } else {
      for (const ir::Type& f : t->fields) {
        auto sub = new_values(f);
        out.insert(out.end(), sub.begin(), sub.end());
      }
    }
    return out;
  }

  std::vector<int> args_of(const ir::CallNode& c) {
    std::vector<int> ins;
    for (const ir::Expr& a : c.args) {
      const auto& v = vals_.at(a.get());
      ins.insert(ins.end(), v.begin(), v.end());
    }
    return ins;
  }

  void visit(const ir::Expr& e) {
    switch (e->kind) {
      case ir::ExprKind::Var:
      case ir::ExprKind::Function:
      case ir::ExprKind::GlobalVar:
        return;
      case ir::ExprKind::Constant: {
        int v = new_value(e->type);
        p_.values[static_cast<size_t>(v)].kind = ValueKind::Constant;
        p_.values[static_cast<size_t>(v)].index = static_cast<int>(p_.constants.size());
        p_.constants.push_back(e->as<ir::ConstantNode>()->value);
        vals_[e.get()] = {v};
        return;
      }
      case ir::ExprKind::Tuple: {
        std::vector<int> all;
        for (const ir::Expr& f : e->as<ir::TupleNode>()->fields) {
          const auto& v = vals_.at(f.get());
          all.insert(all.end(), v.begin(), v.end());
        }
        vals_[e.get()] = all;
        return;
      }
      case ir::ExprKind::TupleGetItem: {
        auto* t = e->as<ir::TupleGetItemNode>();
        // Nested tuples are flattened; item k of a flat tuple of tensors is value k.
        const auto& v = vals_.at(t->tuple.get());
        SY_CHECK(ir::is_tensor(e->type)) << "tuple_get_item of a nested tuple is not supported by the native plan";
        vals_[e.get()] = {v.at(static_cast<size_t>(t->index))};
        return;
      }
      case ir::ExprKind::Call:
        visit_call(e);
        return;
    }
  }

  void visit_call(const ir::Expr& e) {
    auto* c = e->as<ir::CallNode>();
    if (c->is_op()) throw Error("native plan: op " + ops::op_name(c->op) + " outside a fused function (run fuse_ops first)");
    Call call;
    call.inputs = args_of(*c);
    call.outputs = new_values(e->type);
    if (auto* gv = c->callee->as<ir::GlobalVarNode>()) {
      call.external = true;
      call.kernel = gv->name;
      int ci = static_cast<int>(p_.calls.size());
      for (size_t k = 0; k < call.outputs.size(); ++k) {
        Value& v = p_.values[static_cast<size_t>(call.outputs[k])];
        v.kind = ValueKind::External;
        v.index = static_cast<int>(k);
        v.call = ci;
      }
    } else {
      auto* f = c->callee->as<ir::FunctionNode>();
      if (!f || !f->attrs.count("Primitive"))  // possible in a corrupted artifact's graph
        throw Error("native plan: call of a function that is not a fused primitive (run fuse_ops first)");
      if (is_pure_reshape(*f)) {
        int out = call.outputs[0];
        p_.values[static_cast<size_t>(out)].alias_of = call.inputs[0];
        vals_[e.get()] = call.outputs;
        return;  // no call: the output is a view of the input
      }
      call.function = kernel_for(c->callee);
      call.kernel = p_.kernel_names[static_cast<size_t>(call.function)];
      call.fallback = f->attrs.count(kFallbackAttr) != 0;
      ++p_.kernel_launches;
      if (!call.fallback && call.outputs.size() == 1)
        if (std::vector<int64_t> offsets = concat_offsets(*f); !offsets.empty())
          concats_.push_back({static_cast<int>(p_.calls.size()), std::move(offsets)});
    }
    vals_[e.get()] = call.outputs;
    p_.calls.push_back(std::move(call));
  }

  int kernel_for(const ir::Expr& fn) {
    size_t h = ir::structural_hash(fn);
    for (int k : by_hash_[h])
      if (ir::structural_equal(p_.kernels[static_cast<size_t>(k)], fn)) return k;
    int k = static_cast<int>(p_.kernels.size());
    p_.kernels.push_back(fn);
    const auto* f = fn->as<ir::FunctionNode>();
    const ir::CallNode* anchor = strategy::anchor_of(*f);
    auto hooked = f->attrs.find(kLoweredByAttr);  // a region a target hook lowers: by its backend
    std::string op = hooked != f->attrs.end() ? hooked->second : anchor ? ops::op_name(anchor->op) : "fn";
    std::replace(op.begin(), op.end(), '.', '_');
    p_.kernel_names.push_back(numbered("k", static_cast<int64_t>(k)) + "_" + op);
    by_hash_[h].push_back(k);
    return k;
  }

  int root(int v) const {
    while (p_.values[static_cast<size_t>(v)].alias_of >= 0) v = p_.values[static_cast<size_t>(v)].alias_of;
    return v;
  }

  // Results of @main are fresh tensors per run; a result that aliases (reshape) an intermediate
  // makes that intermediate an output too.
  void mark_outputs() {
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      int v = p_.outputs[i];
      Value& val = p_.values[static_cast<size_t>(v)];
      if (val.kind == ValueKind::Storage && val.alias_of < 0) {
        val.kind = ValueKind::Output;
        val.index = static_cast<int>(i);
      }
    }
  }

  // Storage reuse, offline: each planned buffer lives from the call that writes it to the last
  // call that reads it; buffers are placed largest first, each at the lowest offset where it
  // overlaps no placed buffer of an overlapping lifetime (the greedy-by-size assignment of
  // TFLite's and MNN's planners). An online best-fit over the call sequence had to grow the arena
  // whenever the free blocks were fragmented: ResNet-50's plan was 10.4 MB where its largest
  // live set needs less.
  void plan_memory() {
    const int n = static_cast<int>(p_.calls.size());
    std::vector<int> last_use(p_.values.size(), -1), first_def(p_.values.size(), -1);
    for (int i = 0; i < n; ++i) {
      for (int v : p_.calls[static_cast<size_t>(i)].inputs) last_use[static_cast<size_t>(root(v))] = i;
      for (int v : p_.calls[static_cast<size_t>(i)].outputs)
        if (first_def[static_cast<size_t>(v)] < 0) first_def[static_cast<size_t>(v)] = i;
    }
    // Results that are views of intermediates stay alive to the end.
    for (int v : p_.outputs) last_use[static_cast<size_t>(root(v))] = n;
    // In-place results take the storage of the input they replace (share: value -> the value
    // whose storage it takes), which then lives until the result's last use.
    std::vector<int> share(p_.values.size(), -1);
    auto owner = [&](int v) {
      while (share[static_cast<size_t>(v)] >= 0) v = share[static_cast<size_t>(v)];
      return v;
    };
    for (int i = 0; i < n; ++i) {
      const Call& c = p_.calls[static_cast<size_t>(i)];
      if (c.external || c.fallback || c.function < 0 || c.outputs.empty()) continue;
      const auto* f = p_.kernels[static_cast<size_t>(c.function)]->as<ir::FunctionNode>();
      auto at = f ? f->attrs.find(kInPlaceAttr) : ir::FuncAttrs::const_iterator();
      if (!f || at == f->attrs.end()) continue;
      const size_t k = static_cast<size_t>(std::stoi(at->second));
      if (k >= c.inputs.size()) continue;
      const int u = root(c.inputs[k]), v = c.outputs[0];
      const Value &uv = p_.values[static_cast<size_t>(u)], &vv = p_.values[static_cast<size_t>(v)];
      if (uv.kind != ValueKind::Storage || vv.kind != ValueKind::Storage || vv.alias_of >= 0 || uv.nbytes() != vv.nbytes() ||
          last_use[static_cast<size_t>(u)] != i || first_def[static_cast<size_t>(u)] < 0)
        continue;
      // The input read once more by this call only: no other input of the call is it.
      int reads = 0;
      for (int in : c.inputs) reads += root(in) == u;
      if (reads != 1) continue;
      share[static_cast<size_t>(v)] = u;
    }
    // Concatenations in place: each input is planned inside the result (part_of[u] = {result,
    // byte offset}), the producers write their parts there, and the concatenation does not
    // run. Only planned intermediates with no storage shared in place either way, and parts at
    // whole cache lines; a value goes into one result only (the first concatenation taking it).
    struct Part {
      int whole = -1;
      int64_t offset = 0;
    };
    std::vector<Part> part_of(p_.values.size());
    std::vector<char> shared(p_.values.size(), 0);
    for (size_t v = 0; v < p_.values.size(); ++v)
      if (share[v] >= 0) shared[v] = shared[static_cast<size_t>(share[v])] = 1;
    auto planned = [&](int v) {
      const Value& val = p_.values[static_cast<size_t>(v)];
      return val.kind == ValueKind::Storage && val.alias_of < 0 && first_def[static_cast<size_t>(v)] >= 0 &&
             !shared[static_cast<size_t>(v)];
    };
    for (const auto& [ci, offsets] : concats_) {
      Call& c = p_.calls[static_cast<size_t>(ci)];
      const int w = c.outputs[0];
      if (!planned(w)) continue;
      std::vector<int> parts;
      bool ok = true;
      for (size_t k = 0; k < c.inputs.size() && ok; ++k) {
        const int u = root(c.inputs[k]);
        ok = planned(u) && part_of[static_cast<size_t>(u)].whole < 0 && u != w && offsets[k] % kAlign == 0 &&
             std::find(parts.begin(), parts.end(), u) == parts.end();
        parts.push_back(u);
      }
      if (!ok) continue;  // (a part may hold parts of its own: nested concatenations)
      for (size_t k = 0; k < parts.size(); ++k) part_of[static_cast<size_t>(parts[k])] = {w, offsets[k]};
      c.elided = true;
      --p_.kernel_launches;
    }
    // The outermost result that holds v, and v's byte offset in it.
    auto holder = [&](int v, int64_t* at) {
      *at = 0;
      while (part_of[static_cast<size_t>(v)].whole >= 0) {
        *at += part_of[static_cast<size_t>(v)].offset;
        v = part_of[static_cast<size_t>(v)].whole;
      }
      return v;
    };
    struct Buf {
      int value;
      int64_t size;
      int from, to;  // calls, inclusive: an output never shares with an input of its own call
      int64_t offset = -1;
    };
    std::vector<Buf> bufs;
    std::vector<int> to(p_.values.size(), -1);
    for (size_t v = 0; v < p_.values.size(); ++v) {
      const Value& val = p_.values[v];
      if (val.kind != ValueKind::Storage || val.alias_of >= 0) continue;
      p_.intermediate_bytes += val.nbytes();
      if (first_def[v] < 0) continue;  // never written: not planned (cannot happen for a call's output)
      to[v] = std::max(first_def[v], last_use[v]);  // never read: free after its own call
    }
    for (size_t v = 0; v < p_.values.size(); ++v)
      if (share[v] >= 0) {
        const size_t o = static_cast<size_t>(owner(static_cast<int>(v)));
        to[o] = std::max(to[o], to[v]);
      }
    // A concatenation's result lives from its first part's definition to the last use of any.
    std::vector<int> from(first_def);
    for (size_t v = 0; v < p_.values.size(); ++v) {
      int64_t at = 0;
      const size_t h = static_cast<size_t>(holder(static_cast<int>(v), &at));
      if (h == v || to[v] < 0) continue;
      to[h] = std::max(to[h], to[v]);
      from[h] = std::min(from[h], from[v]);
    }
    for (size_t v = 0; v < p_.values.size(); ++v)
      if (to[v] >= 0 && share[v] < 0 && part_of[v].whole < 0)
        bufs.push_back({static_cast<int>(v), aligned(std::max<int64_t>(p_.values[v].nbytes(), 1)), from[v], to[v]});
    std::vector<size_t> order(bufs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return bufs[a].size != bufs[b].size ? bufs[a].size > bufs[b].size : bufs[a].from < bufs[b].from;
    });
    std::vector<size_t> placed;  // by offset
    for (size_t i : order) {
      Buf& b = bufs[i];
      int64_t at = 0;
      for (size_t j : placed) {
        const Buf& o = bufs[j];
        if (o.to < b.from || b.to < o.from) continue;  // lifetimes apart
        if (at + b.size <= o.offset) break;            // fits in the gap below o
        at = std::max(at, o.offset + o.size);
      }
      b.offset = at;
      p_.arena_bytes = std::max(p_.arena_bytes, at + b.size);
      p_.values[static_cast<size_t>(b.value)].offset = at;
      placed.insert(std::upper_bound(placed.begin(), placed.end(), i,
                                     [&](size_t x, size_t y) { return bufs[x].offset < bufs[y].offset; }),
                    i);
    }
    for (size_t v = 0; v < p_.values.size(); ++v)
      if (share[v] >= 0) p_.values[v].offset = p_.values[static_cast<size_t>(owner(static_cast<int>(v)))].offset;
    for (size_t v = 0; v < p_.values.size(); ++v)
      if (part_of[v].whole >= 0) {
        int64_t at = 0;
        const int h = holder(static_cast<int>(v), &at);
        p_.values[v].offset = p_.values[static_cast<size_t>(h)].offset + at;
      }
  }

  const ir::Module& m_;
  Plan p_;
  std::unordered_map<const ir::ExprNode*, std::vector<int>> vals_;
  std::unordered_map<size_t, std::vector<int>> by_hash_;
  std::vector<std::pair<int, std::vector<int64_t>>> concats_;  // call, its inputs' offsets (concat_offsets)
};

}  // namespace

Plan plan_module(const ir::Module& fused) { return Planner(fused).run(); }

}  // namespace sy::native
