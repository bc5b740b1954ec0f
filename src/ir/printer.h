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
#include <vector>

#include "ir/module.h"

namespace sy::ir {

// Where the large constants go in the binary data beside the text (the artifact's form): each
// at a 64-byte aligned offset, zero bytes between them. Only the placement is recorded, not a
// copy of the bytes, so that a writer can stream hundreds of MB of weights from the tensors.
struct BlobLayout {
  struct Entry {
    size_t offset;
    Tensor value;  // shares the constant's storage
  };
  std::vector<Entry> entries;  // in increasing offset order
  size_t size = 0;             // the end of the last entry
  // The data itself, what parse_module takes as `blob` (a copy; for tests and small modules).
  std::string bytes() const;
};

struct PrintOptions {
  // false: the data of large constants (> 16 elements) is replaced by "..." (readable, but no
  // longer parseable); small constants still print their values.
  bool constant_data = true;
  // When set (and constant_data), large constants are placed here and printed as blob(OFFSET).
  BlobLayout* blob = nullptr;
};

std::string print_module(const Module& m, const PrintOptions& opts = {});
std::string print_expr(const Expr& e, const PrintOptions& opts = {});

// How print_module refers to each node, for messages that point into the printed text:
// "%3 in @main", "%x in @main", "the result of @main", "@c0". A node printed in several scopes
// keeps its first name.
std::unordered_map<const ExprNode*, std::string> printed_names(const Module& m);

}  // namespace sy::ir
