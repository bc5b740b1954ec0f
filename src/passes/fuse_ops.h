// Pass: fuse neighbouring ops of @main into primitive functions (fn ... attrs {Primitive="1"}),
// each of which the native path lowers to one kernel.
//
// Rules (by OpKind, as TVM's FuseOps): a producer joins its consumer's group only when the
// consumer is its single user. Elementwise and broadcast ops join any group as its epilogue
// (after an injective chain, a reduction, or a conv/dense/pool anchor); injective ops chain with
// elementwise/broadcast/injective groups; a reduction takes an elementwise/injective prologue; a
// group has at most one anchor (reduce or out-elementwise-fusable op); opaque ops and ops with
// tuple results stay alone. A value read several times by one elementwise group of its own shape
// (x * sigmoid(x)), and by nothing else, takes that group into its producer's as an epilogue.
// Every op call of @main ends up in exactly one primitive function;
// calls of external (BYOC) functions are left as they are.
#pragma once
#include "ir/module.h"

namespace sy::passes {

struct FuseOptions {
  int max_group_ops = 32;  // bigger groups make kernels the C compiler is slow on
};

ir::Module fuse_ops(const ir::Module& m, const FuseOptions& opts = {});

}  // namespace sy::passes
