// One oneDNN region compiled for the current thread count: every primitive created once, weights
// reordered once into the layouts the primitives prefer, activations kept in those (blocked)
// layouts inside the region, intermediate memory planned and allocated once. run() binds the
// inputs and outputs and executes the primitives in order.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "support/tensor.h"

namespace sy::backends::onednn {

struct PlanStats {
  int primitives = 0;        // steps executed per run (including reorders)
  int reorders = 0;          // of which layout reorders (boundary, plain-layout ops, residual copies)
  int fused_post_ops = 0;    // post-ops fused into conv/dense/matmul/batch-norm primitives
  size_t arena_bytes = 0;    // intermediate memory (after reuse)
  size_t weight_bytes = 0;   // reordered constant weights
  std::vector<std::string> kernels;  // implementation name of each primitive, in order
};

class Plan {
 public:
  // Builds the plan of `function` (a FunctionNode); throws sy::Error naming `symbol` and the op when
  // oneDNN cannot create a primitive for it.
  Plan(const std::string& symbol, const ir::Expr& function);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Inputs: one per parameter (checked); returns the flattened results as plain row-major tensors.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  const PlanStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sy::backends::onednn
