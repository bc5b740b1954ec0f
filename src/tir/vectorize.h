// Vectorize and unroll passes: vectorized loops that cannot become one SIMD loop (a non-constant
// extent; nested loops, allocations or calls in the body; a store that does not move with the
// loop variable, i.e. a reduction) turn serial; unrolled loops with a
// small constant extent are expanded into copies of their body.
#pragma once
#include "tir/stmt.h"

namespace sy::tir {

Stmt legalize_vectorize(const Stmt& s);
PrimFunc legalize_vectorize(PrimFunc f);

// Unrolled loops are expanded when extent * body size <= max_statements; larger ones stay
// unrolled loops (the C code generator asks the compiler to unroll them).
Stmt unroll_loops(const Stmt& s, int64_t max_statements = 256);
PrimFunc unroll_loops(PrimFunc f, int64_t max_statements = 256);

}  // namespace sy::tir
