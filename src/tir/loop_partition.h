// Loop-partition pass: splits a loop whose body is guarded by a condition that holds on a prefix
// of its range (a split's tail guard) or on a suffix (a pad's lower edge), in an if or in a
// select's condition, into a guard-free main loop and guarded head or tail loops. In each piece,
// a condition is dropped only where it is proved, under the ranges of the loops around that place.
#pragma once
#include <cstdint>
#include <vector>

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

// The statements of s, nested sequences flattened, in order.
std::vector<Stmt> flat_sequence(const Stmt& s);
// Whether b is the piece of a parallel loop that follows piece a, as partitioning leaves them:
// every piece keeps the loop's variable (no two loops of a kernel share one) and the pieces
// follow each other in the loop's order. Such pieces are iterations of one parallel loop, so
// code generators run them in one team of threads with no barrier between them.
bool continues_parallel_loop(const Stmt& a, const Stmt& b);

}  // namespace sy::tir
