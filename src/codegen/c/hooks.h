// Codegen hooks (TVM's TIRToRuntime): a code generator that replaces the C one for the native
// kernels of a target whose -codegen names it. A hook builds the same thing the C path builds,
// a shared library with the tables module.h reads (sy_kernel_names, sy_kernel_sites, ...), so
// the plan, the executable, artifacts and loading do not change; loading needs no compiler.
// Hooks register from their own folder (src/codegens/<name>/, see cmake/backends.cmake).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/c/build.h"

namespace sy::codegen {

struct CodegenHook {
  std::string description;  // one line for help and errors
  // Builds the kernels into a loaded module (cached as the hook sees fit); sy::Error on failure.
  std::function<std::shared_ptr<Module>(const std::vector<tir::PrimFunc>&, const BuildOptions&)> build;
  // What a build depends on besides its input (the generator's version): part of tuning
  // records' validators, as the C compiler's identity is for the C path.
  std::function<std::string()> identity;
};

// Registers a hook under name ("c" is the built-in C generator and cannot be replaced).
void register_codegen_hook(const std::string& name, CodegenHook hook);
// The hook of that name, or nullptr ("c" has none: it is not a hook).
const CodegenHook* find_codegen_hook(const std::string& name);
// "c" and every registered hook's name, sorted after it.
std::vector<std::string> codegen_names();

}  // namespace sy::codegen
