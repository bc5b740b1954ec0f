// Hooked regions as primitive functions (see hooked_regions.h).
#include "native/hooked_regions.h"

#include <unordered_map>
#include <vector>

#include "ir/visitor.h"
#include "support/error.h"
#include "support/numbered.h"

namespace sy::native {

namespace {

// The region with its body's own constants (not those inside composite bodies, which belong to
// their function) replaced by new parameters after its own; the constants, in that order.
struct Lifted {
  ir::Expr fn;
  std::vector<ir::Expr> constants;
};

class ConstantLifter : public ir::ExprMutator {
 public:
  explicit ConstantLifter(std::unordered_map<const ir::ExprNode*, ir::Expr> to_param) : to_param_(std::move(to_param)) {}

 protected:
  ir::Expr rewrite_constant(const ir::Expr& e) override {
    auto it = to_param_.find(e.get());
    return it == to_param_.end() ? e : it->second;
  }

 private:
  std::unordered_map<const ir::ExprNode*, ir::Expr> to_param_;
};

Lifted lift_constants(const ir::FunctionNode& region, const std::string& backend) {
  Lifted out;
  std::vector<ir::Expr> params = region.params;
  std::unordered_map<const ir::ExprNode*, ir::Expr> to_param;
  for (const ir::Expr& e : ir::post_order(region.body))
    if (e->kind == ir::ExprKind::Constant && !to_param.count(e.get())) {
      ir::Expr p = ir::var(numbered("w", static_cast<int64_t>(out.constants.size())), e->type);
      to_param[e.get()] = p;
      params.push_back(p);
      out.constants.push_back(e);
    }
  ConstantLifter lifter(std::move(to_param));
  // The region's symbol goes: kernels are shared by structure (the encoder's layers lower to one
  // kernel per GEMM shape, not one per region).
  ir::FuncAttrs attrs;
  for (const auto& [k, v] : region.attrs)
    if (k != "global_symbol") attrs.emplace(k, v);
  attrs.emplace("Primitive", "1");
  attrs.emplace(kLoweredByAttr, backend);
  out.fn = ir::function(params, lifter.mutate(region.body), attrs);
  return out;
}

// A split region's body at one call: its parameters bound to the call's arguments, each piece
// (a function marked LoweredBy) called in its primitive form, weights lifted.
class SplitInliner : public ir::ExprMutator {
 public:
  SplitInliner(const ir::FunctionNode& split, const std::vector<ir::Expr>& args, const std::string& backend,
               std::unordered_map<const ir::ExprNode*, Lifted>& pieces)
      : backend_(backend), pieces_(pieces) {
    SY_CHECK(split.params.size() == args.size()) << "a split region with other parameters than the region's";
    for (size_t i = 0; i < args.size(); ++i) bound_[split.params[i].get()] = args[i];
  }

 protected:
  ir::Expr rewrite_var(const ir::Expr& e) override {
    auto it = bound_.find(e.get());
    return it == bound_.end() ? e : it->second;
  }
  ir::Expr rewrite_function(const ir::Expr& orig, const ir::FunctionNode*, ir::Expr) override { return orig; }
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    auto* piece = c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
    auto by = piece ? piece->attrs.find(kLoweredByAttr) : ir::FuncAttrs::const_iterator();
    if (!piece || by == piece->attrs.end())  // inside a piece (its composites and ops)
      return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
    auto it = pieces_.find(piece);
    if (it == pieces_.end()) it = pieces_.emplace(piece, lift_constants(*piece, backend_)).first;
    args.insert(args.end(), it->second.constants.begin(), it->second.constants.end());
    return ir::call_function(it->second.fn, std::move(args));
  }

 private:
  std::string backend_;
  std::unordered_map<const ir::ExprNode*, ir::Expr> bound_;
  std::unordered_map<const ir::ExprNode*, Lifted>& pieces_;
};

// A region of a hook, as one primitive function or as its split.
struct Hooked {
  std::string backend;
  Lifted whole;          // unsplit: the region's primitive form
  ir::Expr split;        // split: the region rewritten into pieces
};

class HookedCallRewriter : public ir::ExprMutator {
 public:
  explicit HookedCallRewriter(const std::map<std::string, Hooked>& regions) : regions_(regions) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    if (auto* gv = c->callee ? c->callee->as<ir::GlobalVarNode>() : nullptr) {
      auto it = regions_.find(gv->name);
      if (it != regions_.end() && it->second.split) {
        SplitInliner inline_split(*it->second.split->as<ir::FunctionNode>(), args, it->second.backend, pieces_);
        return inline_split.mutate(it->second.split->as<ir::FunctionNode>()->body);
      }
      if (it != regions_.end()) {
        args.insert(args.end(), it->second.whole.constants.begin(), it->second.whole.constants.end());
        return ir::call_function(it->second.whole.fn, std::move(args));
      }
    }
    return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
  }

 private:
  const std::map<std::string, Hooked>& regions_;
  // A piece called from several places (a region called twice) is one function.
  std::unordered_map<const ir::ExprNode*, Lifted> pieces_;
};

}  // namespace

ir::Module take_hooked_regions(const ir::Module& m, const std::map<std::string, LoweringHookFn>& hooks,
                               const std::map<std::string, RegionSplitFn>& splits, const target::Target* target) {
  if (hooks.empty()) return m;
  std::map<std::string, Hooked> regions;  // symbol -> its primitive form or its split
  for (const auto& [name, f] : m.functions) {
    if (name == "main") continue;
    const auto* fn = f->as<ir::FunctionNode>();
    auto compiler = fn ? fn->attrs.find("Compiler") : ir::FuncAttrs::const_iterator();
    if (!fn || compiler == fn->attrs.end() || !hooks.count(compiler->second)) continue;
    Hooked h;
    h.backend = compiler->second;
    auto split = splits.find(compiler->second);
    if (split != splits.end() && target)
      if (std::optional<ir::Expr> s = split->second(*fn, *target)) h.split = *s;
    if (h.split) {
      const auto* sf = h.split->as<ir::FunctionNode>();
      if (!sf || sf->params.size() != fn->params.size())
        throw Error("the " + h.backend + " hook split region " + name + " into a function of other parameters");
      for (const ir::Expr& e : ir::post_order(sf->body)) {
        auto* c = e->as<ir::CallNode>();
        auto* piece = c && c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
        if (c && (!piece || !piece->attrs.count(kLoweredByAttr)))
          throw Error("the " + h.backend + " hook split region " + name + " into a call of something other than its pieces");
      }
    }
    if (!h.split) h.whole = lift_constants(*fn, compiler->second);
    regions.emplace(name, std::move(h));
  }
  if (regions.empty()) return m;
  ir::Module out = m;
  for (const auto& [name, lifted] : regions) out.functions.erase(name);
  HookedCallRewriter rw(regions);
  const ir::FunctionNode& main = m.main();
  out.functions["main"] = ir::function(main.params, rw.mutate(main.body), main.attrs);
  return out;
}

}  // namespace sy::native
