// Loop-partition pass: splits a loop whose body is guarded by a condition that holds on a prefix
// of its range (a split's tail guard) into a guard-free main loop and a guarded tail loop.
#pragma once
#include "tir/stmt.h"

namespace sy::tir {

Stmt loop_partition(const Stmt& s);
PrimFunc loop_partition(PrimFunc f);

}  // namespace sy::tir
