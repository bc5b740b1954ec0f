// Module: named functions; "main" is the entry point.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace sy::ir {

struct Module {
  // Ordered by name so that printing is deterministic.
  std::map<std::string, Expr> functions;  // each a FunctionNode
  // Names of main's outputs (from the ONNX graph or the zoo), one per output tensor; may be empty.
  std::vector<std::string> output_names;

  const FunctionNode& main() const;
  bool has(const std::string& name) const { return functions.count(name) != 0; }
  // GlobalVar for calling a module function.
  Expr global(const std::string& name) const;
};

}  // namespace sy::ir
