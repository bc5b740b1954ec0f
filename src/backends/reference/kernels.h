// Reference kernels: straightforward, obviously correct implementations of every built-in op.
// They are the oracle of every test; clarity beats speed (but keep loops cache-friendly and
// parallelise the heavy ones with OpenMP so whole models run in seconds).
#pragma once
#include <vector>

#include "ir/attrs.h"
#include "ir/type.h"
#include "ops/evaluator.h"
#include "ops/op.h"
#include "support/tensor.h"

namespace sy::reference {

// Evaluates one op. out_type is the call's inferred type; the result holds one tensor for a
// tensor-typed op and one tensor per field for a tuple-typed op (split, topk).
// Throws sy::Error for data-dependent problems (e.g. a gather index out of range).
std::vector<Tensor> eval_op(ops::OpCode op, const ir::Attrs& attrs, const std::vector<Tensor>& args,
                            const ir::Type& out_type);

// eval_op behind the interface that constant folding and the zoo use (registered at start-up).
const ops::Evaluator& evaluator();

}  // namespace sy::reference
