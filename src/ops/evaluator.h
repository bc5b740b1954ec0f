// Evaluating an op on constant tensors, as an interface. Constant folding and the zoo's
// generated weights need each op's results but must not depend on a backend; the reference
// backend provides the implementation, registered by sy::register_builtins() at start-up.
#pragma once
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/type.h"
#include "support/tensor.h"

namespace sy::ops {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // One tensor for a tensor-typed op, one per field for a tuple-typed one (split, topk).
  // Throws sy::Error for data-dependent problems (a gather index out of range).
  virtual std::vector<Tensor> eval(ir::OpCode op, const ir::Attrs& attrs, const std::vector<Tensor>& args,
                                   const ir::Type& out_type) const = 0;
};

// The registered evaluator must outlive every use (a static object of the backend).
void set_evaluator(const Evaluator* evaluator);
// The registered one; a programming error (reported as such) when none is.
const Evaluator& evaluator();

}  // namespace sy::ops
