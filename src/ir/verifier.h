// Verifier: checks IR invariants (every var bound, types consistent with op relations, tuple
// indices in range, functions called with matching types, main present).
#pragma once
#include "ir/module.h"
#include "support/status.h"

namespace sy::ir {

Status verify(const Module& m);

}  // namespace sy::ir
