// Test helpers for the native path: run one op (or one fused function) through topi, the loop IR
// and the C compiler, and compare with the reference kernels.
#pragma once
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ops/op.h"
#include "support/tensor.h"

namespace sy::testing {

// Lowers fn (a fused primitive function), builds it and runs it on inputs.
std::vector<Tensor> run_native_function(const ir::Expr& fn, const std::vector<Tensor>& inputs);

// The same for one op call with the given attributes (nullptr: the op's defaults).
std::vector<Tensor> run_native_op(ops::OpCode op, const ir::AttrsPtr& attrs, const std::vector<Tensor>& inputs);

// Runs the op natively and with the reference kernels; expects equal shapes and dtypes and
// |native - reference| <= atol + rtol * |reference| elementwise (exact for integer/bool).
void expect_native_matches_reference(ops::OpCode op, const ir::AttrsPtr& attrs, const std::vector<Tensor>& inputs,
                                     double rtol = 1e-5, double atol = 1e-6);

// One op call of a batch (see expect_native_cases_match_reference).
struct NativeCase {
  ops::OpCode op;
  ir::AttrsPtr attrs;  // nullptr: the op's defaults
  std::vector<Tensor> inputs;
  double rtol = 1e-5;
  double atol = 1e-6;
  std::string label = "";  // printed with failures
};

// Lowers every case to its own kernel of one module (one C compilation for the whole batch), runs
// each natively and with the reference kernels and compares every output: equal shapes and
// dtypes, |native - reference| <= atol + rtol * |reference| (NaN matches NaN, an infinity the
// same infinity; exact for integer/bool).
void expect_native_cases_match_reference(const std::vector<NativeCase>& cases);

}  // namespace sy::testing
