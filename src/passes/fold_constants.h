// Constant folding: op calls whose arguments are all constants are evaluated with the reference
// kernels and replaced by constants (tuple-valued calls by tuples of constants).
#pragma once
#include "ir/module.h"

namespace sy::passes {

// Folds one node if possible: an op call with all-constant args becomes a Constant (or a Tuple of
// Constants), a TupleGetItem of a Tuple becomes the field. Otherwise returns e unchanged.
ir::Expr fold_node(const ir::Expr& e);

// Folds every foldable node of every function of the module (bottom-up, to a fixed point in one
// pass since inputs are folded before their users). Function calls are not folded.
ir::Module fold_constants(const ir::Module& m);

}  // namespace sy::passes
