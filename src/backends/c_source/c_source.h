// The C-source example backend: float32 elementwise/broadcast regions become C loop nests, built
// by the system C compiler into a shared library that the runtime module dlopens.
//
// Everything an integrator writes lives in this folder:
//   c_source_backend.cpp  the Backend: which ops it takes (and why not), compile, load
//   codegen.cpp           external function -> C source (one fused loop nest per output shape)
//   module.cpp            C source -> shared library (cc), and the RuntimeModule that dlopens it
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace sy::backends::c_source {

// The C expression computing `call` from its operands (C identifiers or literals), or "" when
// the op (with these attributes) has no C form here. The single source of truth for what the
// backend supports.
std::string op_expr(const ir::CallNode& call, const std::vector<std::string>& args);

// What the runtime needs to call one generated C function
//   void <c_name>(const float* const* in, float* const* out)
// where `in` holds the inputs, then the constants.
struct FunctionInfo {
  std::string symbol;              // the external function's symbol ("c_source_0")
  std::string c_name;              // its name in the C source ("sy_fn_0")
  std::vector<ir::Type> params;    // expected input types
  std::vector<Tensor> constants;   // weights: passed by pointer, never copied into the C
  std::vector<ir::Type> outputs;   // the flattened result types
};

struct Generated {
  std::string source;  // the whole C file
  std::string abi;     // a line naming every function's signature; stored in the library too
  std::vector<FunctionInfo> functions;
};

// Deterministic: the same functions (in any order) give the same source.
Generated generate(const std::vector<ExternFunction>& fns);

// Runs the system C compiler ($CC, else cc) on `source` with the target's ISA flags; returns the shared library's bytes.
// Throws sy::Error with the compiler's message, or when no compiler is found.
std::string compile_shared_library(const std::string& source, const std::vector<std::string>& target_flags);

// Runs the functions of a shared library built from `code.source`.
class CModule : public RuntimeModule {
 public:
  // Writes `library` to a private temporary file and dlopens it (no compiler needed).
  CModule(Generated code, std::string library);
  ~CModule() override;
  std::vector<Tensor> run(const std::string& symbol, const std::vector<Tensor>& inputs) override;
  std::string save() const override { return library_; }
  // The generated C, for inspection and tests.
  const std::string& source() const { return code_.source; }

 private:
  using Fn = void (*)(const float* const* in, float* const* out);
  Generated code_;
  std::string library_;
  void* handle_ = nullptr;
  std::vector<Fn> fns_;  // parallel to code_.functions
};

}  // namespace sy::backends::c_source
