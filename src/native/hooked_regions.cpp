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

class HookedCallRewriter : public ir::ExprMutator {
 public:
  explicit HookedCallRewriter(const std::map<std::string, Lifted>& regions) : regions_(regions) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    if (auto* gv = c->callee ? c->callee->as<ir::GlobalVarNode>() : nullptr) {
      auto it = regions_.find(gv->name);
      if (it != regions_.end()) {
        args.insert(args.end(), it->second.constants.begin(), it->second.constants.end());
        return ir::call_function(it->second.fn, std::move(args));
      }
    }
    return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
  }

 private:
  const std::map<std::string, Lifted>& regions_;
};

}  // namespace

ir::Module take_hooked_regions(const ir::Module& m, const std::map<std::string, LoweringHookFn>& hooks) {
  if (hooks.empty()) return m;
  std::map<std::string, Lifted> regions;  // symbol -> its primitive form
  for (const auto& [name, f] : m.functions) {
    if (name == "main") continue;
    const auto* fn = f->as<ir::FunctionNode>();
    auto compiler = fn ? fn->attrs.find("Compiler") : ir::FuncAttrs::const_iterator();
    if (!fn || compiler == fn->attrs.end() || !hooks.count(compiler->second)) continue;
    regions.emplace(name, lift_constants(*fn, compiler->second));
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
