// Accumulators kept in registers across a loop: a register tile stored at an offset that varies
// with an outer loop, read and written through memory in every iteration otherwise.
#pragma once
#include "tir/stmt.h"

namespace sy::tir {

// In a loop whose body reads and writes a locally allocated buffer only in whole vector windows
// (base + constant + lane of a vectorized loop) at one base that the loop does not change, and
// only unconditionally, each window becomes its own small buffer: read from the big one before
// the loop, written back after it. The base must vary with an outer loop; tiles at constant
// offsets are left to the C compiler, which keeps them in registers already.
Stmt promote_accumulators(const Stmt& s);
PrimFunc promote_accumulators(PrimFunc f);

}  // namespace sy::tir
