// Verifier: checks IR invariants and reports the first violation with a precise message
// ("in @main: %5 in @main (nn.conv2d): stored type ... differs from ...").
//
// Checked: @main exists; every module entry is a function; no null nodes or types; functions are
// closed: a body (excluding nested fn bodies) uses only the parameters of its own function,
// constants and @globals -- a nested fn may not capture values or parameters of the enclosing
// function (composite, fused and partitioned functions are all self-contained, and the text
// form relies on it); parameters are distinct; each op call has its op's attribute struct, an
// accepted number of arguments, and the type its relation gives; function calls match the
// callee's parameter types; tuple indices are in range; node types agree with their inputs;
// @globals refer to existing functions with the same type; if output_names is non-empty, it
// has one name per value @main returns (the fields of a returned tuple, else one).
#pragma once
#include "ir/module.h"
#include "support/status.h"

namespace sy::ir {

Status verify(const Module& m);

}  // namespace sy::ir
