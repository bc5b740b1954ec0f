// Scalar value builders of the elementwise ops, shared by the elementwise, transform and reduce
// computes (e.g. a cast inside a reduction).
#pragma once
#include "ir/expr.h"
#include "tir/expr.h"

namespace sy::topi {

struct Registry;

// v converted to dtype `to` with the reference's (numpy's) semantics: float -> int truncates
// through int64 with saturation (NaN -> 0) and wraps; anything -> bool is != 0.
tir::Expr cast_value(DType to, const tir::Expr& v);
// The value of a unary elementwise call at input value v.
tir::Expr unary_value(const ir::CallNode& call, const tir::Expr& v);
// The value of a binary broadcasting call at input values a, b.
tir::Expr binary_value(const ir::CallNode& call, const tir::Expr& a, const tir::Expr& b);

void register_unary(Registry& r);
void register_binary(Registry& r);

}  // namespace sy::topi
