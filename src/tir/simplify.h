// Simplify pass: constant folding, linear canonical form of index arithmetic, and removal of
// conditions, selects, min/max and loops that loop-variable ranges decide.
#pragma once
#include "tir/arith.h"
#include "tir/stmt.h"

namespace sy::tir {

Expr simplify(const Expr& e, const RangeMap& ranges = {});
Stmt simplify(const Stmt& s);
PrimFunc simplify(PrimFunc f);

}  // namespace sy::tir
