// Hoist-guards pass: a loop whose whole body is `if (c) S` with c (or some of its && terms) not
// depending on the loop becomes `if (c) for (...) S`. A tiled kernel's row guard (the last tile
// of 3136 rows in tiles of 6) sits on every store of the innermost, vectorized loop; GCC does not
// vectorize a loop with control flow it cannot if-convert (an epilogue with sigmoid's exp in it),
// and so computed that epilogue one element at a time: a dense with sigmoid ran 3.5x the dense
// alone.
#pragma once
#include "tir/stmt.h"

namespace sy::tir {

// Terms move out of serial, unrolled and vectorized loops, never out of parallel ones (the
// team's split stays as planned). Only conditions that cannot fault or read memory move: they
// are then evaluated once, even where the loop would not run.
Stmt hoist_guards(const Stmt& s);
PrimFunc hoist_guards(PrimFunc f);

}  // namespace sy::tir
