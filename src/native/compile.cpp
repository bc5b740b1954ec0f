// The native compile pipeline.
#include "native/compile.h"

#include <chrono>

#include "codegen/c/build.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

#include <map>
#include "native/lower_function.h"
#include "passes/fold_constants.h"
#include "passes/fuse_ops.h"
#include "support/error.h"
#include "topi/topi.h"

namespace sy::native {

namespace {
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// Marks the fused functions that failed to lower with Fallback=<reason>.
class FallbackMarker : public ir::ExprMutator {
 public:
  FallbackMarker(const Plan& plan, const std::map<const ir::ExprNode*, std::string>& failed)
      : plan_(plan), failed_(failed) {}

 protected:
  ir::Expr rewrite_call(const ir::Expr& orig, const ir::CallNode* c, std::vector<ir::Expr> args,
                        ir::Expr callee) override {
    if (auto* f = c->callee ? c->callee->as<ir::FunctionNode>() : nullptr) {
      for (const auto& [k, why] : failed_)
        if (c->callee.get() == k || ir::structural_equal(c->callee, plan_.kernels[index_of(k)])) {
          ir::FuncAttrs attrs = f->attrs;
          attrs[kFallbackAttr] = why;
          return ir::call_function(ir::function(f->params, f->body, attrs), std::move(args));
        }
    }
    return ExprMutator::rewrite_call(orig, c, std::move(args), std::move(callee));
  }

 private:
  size_t index_of(const ir::ExprNode* k) const {
    for (size_t i = 0; i < plan_.kernels.size(); ++i)
      if (plan_.kernels[i].get() == k) return i;
    return 0;
  }
  const Plan& plan_;
  const std::map<const ir::ExprNode*, std::string>& failed_;
};

ir::Module mark_fallbacks(const ir::Module& m, const Plan& plan, const std::map<const ir::ExprNode*, std::string>& failed) {
  ir::Module out = m;
  const ir::FunctionNode& main = m.main();
  FallbackMarker mk(plan, failed);
  out.functions["main"] = ir::function(main.params, mk.mutate(main.body), main.attrs);
  return out;
}

}  // namespace

bool is_fused(const ir::Module& m) {
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op()) return false;
  return true;
}

Compiled compile_native(const ir::Module& m, const CompileOptions& opts) {
  auto say = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  Compiled out;
  auto t0 = std::chrono::steady_clock::now();
  out.fused = is_fused(m) ? m : passes::fuse_ops(passes::fold_constants(m));
  Plan plan = plan_module(out.fused);
  std::vector<tir::PrimFunc> funcs;
  std::map<const ir::ExprNode*, std::string> failed;  // kernel function -> reason
  LowerFunctionOptions lo;
  lo.vector_lanes = opts.vector_lanes;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    say("lowering kernel " + std::to_string(k + 1) + "/" + std::to_string(plan.kernels.size()) + " (" +
        plan.kernel_names[k] + ")");
    const auto* fn = plan.kernels[k]->as<ir::FunctionNode>();
    if (fn->attrs.count(kFallbackAttr)) continue;
    try {
      funcs.push_back(lower_function(*fn, plan.kernel_names[k], lo));
    } catch (const Error& e) {
      failed[plan.kernels[k].get()] = e.what();
      out.fallbacks.emplace_back(plan.kernel_names[k], e.what());
    }
  }
  if (!failed.empty()) {
    out.fused = mark_fallbacks(out.fused, plan, failed);
    plan = plan_module(out.fused);
  }
  out.lower_seconds = since(t0);
  auto t1 = std::chrono::steady_clock::now();
  say("compiling " + std::to_string(funcs.size()) + " kernels with the C compiler");
  codegen::BuildOptions bo;
  bo.externs = topi::extern_table();
  std::shared_ptr<codegen::Module> lib = funcs.empty() ? nullptr : codegen::build(funcs, bo);
  out.compile_seconds = since(t1);
  out.c_source = lib ? lib->c_source() : "";
  out.executable = std::make_shared<Executable>(std::move(plan), std::move(lib));
  return out;
}

std::shared_ptr<Executable> load_native(const ir::Module& fused, const std::string& library_bytes) {
  if (!is_fused(fused)) throw Error("the artifact's graph is not in fused form");
  Plan plan = plan_module(fused);
  std::shared_ptr<codegen::Module> lib =
      library_bytes.empty() ? nullptr : codegen::Module::load_from_bytes(library_bytes, topi::extern_table());
  for (const Call& c : plan.calls)
    if (!c.external && !c.fallback && (!lib || !lib->has_kernel(c.kernel)))
      throw Error("the artifact's native library has no kernel " + c.kernel);
  return std::make_shared<Executable>(std::move(plan), std::move(lib));
}

}  // namespace sy::native
