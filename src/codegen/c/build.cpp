#include "codegen/c/build.h"

namespace sy::codegen {

std::shared_ptr<Module> build(const std::vector<tir::PrimFunc>& funcs, const BuildOptions& opts) {
  std::string src = generate_c(funcs, opts.source);
  std::string so = compile_shared_library(src, opts.compile);
  return Module::load(so, opts.externs, std::move(src));
}

}  // namespace sy::codegen
