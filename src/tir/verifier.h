// Verifier of loop-IR functions: scoping of variables and buffers, dtypes, loop kinds.
#pragma once
#include <string>
#include <vector>

#include "tir/stmt.h"

namespace sy::tir {

// Every problem found, one message each; empty when f is well formed.
std::vector<std::string> verify(const PrimFunc& f);
// Throws InternalError listing the problems (lowering must only produce valid functions).
void check_valid(const PrimFunc& f);

}  // namespace sy::tir
