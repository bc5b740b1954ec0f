// build(funcs) -> module: C source, compile (cached), load. The entry point for the native path.
#pragma once
#include <memory>
#include <vector>

#include "codegen/c/c_generator.h"
#include "codegen/c/compiler.h"
#include "codegen/c/module.h"
#include "tir/stmt.h"

namespace sy::codegen {

struct BuildOptions {
  CSourceOptions source;
  CompileOptions compile;
  ExternSymbols externs;
};

std::shared_ptr<Module> build(const std::vector<tir::PrimFunc>& funcs, const BuildOptions& opts = {});

}  // namespace sy::codegen
