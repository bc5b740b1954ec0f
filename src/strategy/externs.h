// The C functions extern implementations call, by name: topi's stateless ones (topk, scatter …)
// and the stateful externs libraries register from their folders (include/switchyard/extern_abi.h:
// init at load, run per call, destroy), so that nothing in the core names a library.
#pragma once
#include <string>
#include <vector>

#include "codegen/c/module.h"
#include "switchyard/extern_abi.h"

namespace sy::strategy {

struct StatefulExtern {
  sy_extern_init_fn init = nullptr;
  sy_extern_run_fn run = nullptr;
  sy_extern_destroy_fn destroy = nullptr;
  // The library and its version (e.g. "oneDNN 2.7.3"), part of tuning records' validators.
  std::string library;
};

// Registers a stateful extern under a C identifier; a name used twice is a bug. Call before the
// first compile (registration is not thread-safe), as for register_implementation.
void register_stateful_extern(const std::string& name, StatefulExtern e);
// nullptr when no such extern is registered.
const StatefulExtern* find_stateful_extern(const std::string& name);
// The libraries of the registered externs, sorted and unique: {"OpenBLAS 0.3.21", "oneDNN 2.7.3"}.
std::vector<std::string> extern_library_list();
// The same joined: "OpenBLAS 0.3.21, oneDNN 2.7.3" ("" if none).
std::string extern_libraries();

// What generated code may call: topi's extern table and every stateful extern's run function.
codegen::ExternSymbols extern_symbols();

}  // namespace sy::strategy
