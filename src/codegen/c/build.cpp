#include "codegen/c/build.h"

#include "codegen/c/hooks.h"
#include "support/error.h"
#include "support/join.h"

namespace sy::codegen {

std::shared_ptr<Module> build(const std::vector<tir::PrimFunc>& funcs, const BuildOptions& opts) {
  if (opts.target && opts.target->codegen != "c") {
    const CodegenHook* hook = find_codegen_hook(opts.target->codegen);
    if (!hook)
      throw Error("target codegen '" + opts.target->codegen + "' is not built in (built in: " +
                  join(codegen_names(), ", ") + ")");
    return hook->build(funcs, opts);
  }
  CUnits src = generate_c_units(funcs, opts.source, kMaxUnits);
  std::string so = compile_shared_library(src.units, opts.compile);
  return Module::load(so, opts.externs, std::move(src.whole));
}

}  // namespace sy::codegen
