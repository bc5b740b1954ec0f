// The reference executor: runs any module by interpreting its graph with the reference kernels.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "support/status.h"
#include "support/tensor.h"

namespace sy::reference {

// Runs an external function (a module function with a Compiler attribute) by its symbol;
// returns its flattened results.
using ExternalCall = std::function<std::vector<Tensor>(const std::string& symbol, const std::vector<Tensor>& args)>;

struct ExecOptions {
  int threads = 0;  // 0: all cores
  // Calls of external functions go here when set (else their bodies are interpreted).
  ExternalCall external;
};

// Runs @main on inputs (one per parameter, in order). Returns one tensor per output (a tuple
// result is flattened). Input dtypes and shapes are checked against the parameters with an error
// naming the input.
Result<std::vector<Tensor>> run_module(const ir::Module& m, const std::vector<Tensor>& inputs,
                                       const ExecOptions& opts = {});

}  // namespace sy::reference
