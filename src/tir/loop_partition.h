// Loop-partition pass: splits a loop whose body is guarded by a condition that holds on a prefix
// of its range (a split's tail guard) or on a suffix (a pad's lower edge), in an if or in a
// select's condition, into a guard-free main loop and guarded head or tail loops.
#pragma once
#include "tir/stmt.h"

namespace sy::tir {

Stmt loop_partition(const Stmt& s);
PrimFunc loop_partition(PrimFunc f);

}  // namespace sy::tir
