// build(funcs) -> module: C source, compile (cached), load. The entry point for the native path.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/c/c_generator.h"
#include "codegen/c/compiler.h"
#include "codegen/c/module.h"
#include "target/target.h"
#include "tir/stmt.h"

namespace sy::codegen {

struct BuildOptions {
  CSourceOptions source;
  CompileOptions compile;
  ExternSymbols externs;
  // The target the kernels are for; its `codegen` picks the code generator (hooks.h). Unset:
  // the C generator with compile.target_flags.
  std::optional<target::Target> target;
};

// Builds with the C generator, or with the codegen hook the target names (sy::Error naming the
// generators built in if there is no such hook).
std::shared_ptr<Module> build(const std::vector<tir::PrimFunc>& funcs, const BuildOptions& opts = {});

}  // namespace sy::codegen
