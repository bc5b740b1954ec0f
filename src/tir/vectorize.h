// Vectorize and unroll passes: vectorized loops that cannot become one SIMD loop (a non-constant
// extent; nested loops, allocations or calls in the body; a store that does not move with the
// loop variable, unless the loop is one reduction: see VectorReduction) turn serial; unrolled loops with a
// small constant extent are expanded into copies of their body.
#pragma once
#include <optional>

#include "tir/stmt.h"

namespace sy::tir {

// A vectorized loop that reduces into one element: `[if (cond)] B[idx] = B[idx] + e` (or
// max/min(B[idx], e)) with idx and e independent of B's element. The C code generator keeps it a
// SIMD loop with a scalar accumulator and an OpenMP reduction clause (sums are reassociated).
struct VectorReduction {
  Stmt store;  // the update
  Expr cond;   // guard, or null
  ReduceKind kind = ReduceKind::Sum;
  Expr operand;  // e
};
std::optional<VectorReduction> match_vector_reduction(const Stmt& loop);

Stmt legalize_vectorize(const Stmt& s);
PrimFunc legalize_vectorize(PrimFunc f);

// Unrolled loops are expanded when extent * body size <= max_statements; larger ones stay
// unrolled loops (the C code generator asks the compiler to unroll them).
Stmt unroll_loops(const Stmt& s, int64_t max_statements = 256);
PrimFunc unroll_loops(PrimFunc f, int64_t max_statements = 256);

}  // namespace sy::tir
