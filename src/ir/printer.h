// Text form of the IR (printer). The text parses back to a structurally equal module.
//
// Layout: `#[version]` and `#[outputs]` headers, one `def @name(params) -> type { ... }` per module
// function (in name order), then a `constants { ... }` section. A body is a flat list of
// let-bound `%N = ...;` lines (every non-atomic node once, inputs first) ending with the result
// expression. Nested functions (`fn (...) -> T attrs {...} { ... }`) are closed: their bodies use
// only their own parameters, constants and @globals. Call types are not printed (the parser
// re-infers them); parameter and return types are.
#pragma once
#include <string>
#include <unordered_map>

#include "ir/module.h"

namespace sy::ir {

struct PrintOptions {
  // false: the data of large constants (> 16 elements) is replaced by "..." (readable, but no
  // longer parseable); small constants still print their values.
  bool constant_data = true;
  // When set (and constant_data), the bytes of large constants are appended here, each at a
  // 64-byte aligned offset, and printed as blob(OFFSET): binary weights beside the text (the
  // artifact's form; parse_module takes the same blob back).
  std::string* blob = nullptr;
};

std::string print_module(const Module& m, const PrintOptions& opts = {});
std::string print_expr(const Expr& e, const PrintOptions& opts = {});

// How print_module refers to each node, for messages that point into the printed text:
// "%3 in @main", "%x in @main", "the result of @main", "@c0". A node printed in several scopes
// keeps its first name.
std::unordered_map<const ExprNode*, std::string> printed_names(const Module& m);

}  // namespace sy::ir
