// Remove-no-op pass: drops empty loops and branches, self-assignments, unused lets and allocations.
#pragma once
#include "tir/stmt.h"

namespace sy::tir {

Stmt remove_no_op(const Stmt& s);
PrimFunc remove_no_op(PrimFunc f);

}  // namespace sy::tir
