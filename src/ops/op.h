// The ops layer: what each built-in op means. The op identities and the table live in the IR
// (ir/op.h); this layer fills the table with each op's attribute defaults and type relation,
// one source file per op family.
#pragma once
#include "ir/op.h"

namespace sy::ops {

using ir::OpCode;
using ir::OpDef;
using ir::OpKind;
using ir::OpRegistry;
using ir::TypeRelation;
using ir::op_def;
using ir::op_name;

// Registers every built-in op's semantics in ir::OpRegistry (once; later calls do nothing).
// sy::register_builtins() calls it before main in every program linking switchyard_backends.
void register_builtin_ops();

// Family registration (one per source file under src/ops/), called by register_builtin_ops.
void register_elementwise_ops(OpRegistry& r);
void register_nn_ops(OpRegistry& r);
void register_transform_ops(OpRegistry& r);
void register_reduce_ops(OpRegistry& r);

}  // namespace sy::ops
