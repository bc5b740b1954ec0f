// Text form of the IR (printer). The text parses back to a structurally equal module.
#pragma once
#include <string>

#include "ir/module.h"

namespace sy::ir {

struct PrintOptions {
  // false: constant data is replaced by "..." (readable, but no longer parseable).
  bool constant_data = true;
};

std::string print_module(const Module& m, const PrintOptions& opts = {});
std::string print_expr(const Expr& e, const PrintOptions& opts = {});

}  // namespace sy::ir
