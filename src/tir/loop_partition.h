// Loop-partition pass: splits a loop whose body is guarded by a condition that holds on a prefix
// of its range (a split's tail guard) or on a suffix (a pad's lower edge), in an if or in a
// select's condition, into a guard-free main loop and guarded head or tail loops. In each piece,
// a condition is dropped only where it is proved, under the ranges of the loops around that place.
#pragma once
#include <cstdint>

#include "tir/stmt.h"

namespace sy::tir {

// Statements in s (every nested statement counted once).
int64_t stmt_count(const Stmt& s);
// How many statements partitioning may grow a function lowered as `lowered` to (see the .cpp).
int64_t partition_limit(const Stmt& lowered);

// Partitions while the result stays within max_statements (-1: partition_limit(s)); loops that
// would exceed it are left guarded, which is correct, only slower.
Stmt loop_partition(const Stmt& s, int64_t max_statements = -1);
PrimFunc loop_partition(PrimFunc f, int64_t max_statements = -1);

}  // namespace sy::tir
