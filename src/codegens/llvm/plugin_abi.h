// Between the llvm codegen hook (llvm_codegen.cpp, inside libswitchyard) and the library that
// holds LLVM (libswitchyard_llvm.so, llvm_plugin.cpp), which the hook loads on its first build:
// a process that never builds with -codegen=llvm never loads libLLVM-14, whose start-up (~50 ms
// of static initialisers and relocations) every switchyard process paid before.
// Both sides are built from this tree by the same compiler, so C++ types cross the boundary; the
// plugin holds its own copies of the layers it uses (tir, codegen, target, support) and throws
// nothing across it: errors come back as text.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "target/target.h"
#include "tir/stmt.h"

namespace sy::codegen::llvmgen {

struct PluginRequest {
  const std::vector<tir::PrimFunc>* funcs = nullptr;
  target::Target target;
  int64_t max_stack_bytes = 64 * 1024;
  // Given the module's IR and the machine it is built for, whether the object file is wanted
  // (false when the cache already holds the library).
  std::function<bool(const std::string& ir, const std::string& machine)> wants_object;
};

struct PluginResult {
  std::string ir;       // the verified module, as text
  std::string machine;  // LLVM's version, the pipeline, CPU, features and tuning: part of the cache key
  std::string object;   // the ELF object file, when wanted
  std::string error;    // "" on success, else one line
};

// The plugin's one exported symbol.
using PluginEmitFn = void (*)(const PluginRequest&, PluginResult&);
inline constexpr const char* kPluginEmitSymbol = "sy_llvm_plugin_emit";
inline constexpr const char* kPluginFile = "libswitchyard_llvm.so";

}  // namespace sy::codegen::llvmgen
