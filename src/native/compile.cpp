// The native compile pipeline.
#include "native/compile.h"

#include <chrono>

#include "codegen/c/build.h"
#include "ir/visitor.h"
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
  LowerFunctionOptions lo;
  lo.vector_lanes = opts.vector_lanes;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    say("lowering kernel " + std::to_string(k + 1) + "/" + std::to_string(plan.kernels.size()) + " (" +
        plan.kernel_names[k] + ")");
    funcs.push_back(lower_function(*plan.kernels[k]->as<ir::FunctionNode>(), plan.kernel_names[k], lo));
  }
  out.lower_seconds = since(t0);
  auto t1 = std::chrono::steady_clock::now();
  say("compiling " + std::to_string(funcs.size()) + " kernels with the C compiler");
  codegen::BuildOptions bo;
  bo.externs = topi::extern_table();
  std::shared_ptr<codegen::Module> lib = codegen::build(funcs, bo);
  out.compile_seconds = since(t1);
  out.c_source = lib->c_source();
  out.executable = std::make_shared<Executable>(std::move(plan), std::move(lib));
  return out;
}

std::shared_ptr<Executable> load_native(const ir::Module& fused, const std::string& library_bytes) {
  if (!is_fused(fused)) throw Error("the artifact's graph is not in fused form");
  Plan plan = plan_module(fused);
  std::shared_ptr<codegen::Module> lib = codegen::Module::load_from_bytes(library_bytes, topi::extern_table());
  for (const std::string& k : plan.kernel_names)
    if (!lib->has_kernel(k)) throw Error("the artifact's native library has no kernel " + k);
  return std::make_shared<Executable>(std::move(plan), std::move(lib));
}

}  // namespace sy::native
