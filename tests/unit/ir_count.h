// How many calls of an op a module's main function makes (the passes' tests).
#pragma once
#include "ir/module.h"
#include "ir/visitor.h"
#include "ops/op.h"

namespace sy::irtest {

inline int count_op(const ir::Module& m, ops::OpCode op) {
  int n = 0;
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c->op == op) ++n;
  return n;
}

}  // namespace sy::irtest
