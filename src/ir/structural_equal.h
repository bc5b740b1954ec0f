// Structural equality and hashing: graphs equal up to renaming of variables and node sharing
// that produces the same dataflow.
#pragma once
#include <cstddef>
#include <string>

#include "ir/module.h"

namespace sy::ir {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Module& a, const Module& b);
// Equal modules hash equally.
size_t structural_hash(const Expr& e);
size_t structural_hash(const Module& m);

// If not equal, a one-line description of the first difference found (for test messages).
std::string first_difference(const Module& a, const Module& b);

}  // namespace sy::ir
