// Small helpers shared by the op computes: result types of a call, broadcast reads, typed
// constants, NaN tests and the operands of a concatenation.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/type.h"
#include "te/tensor.h"
#include "tir/expr.h"

namespace sy::topi {

using tir::Expr;

// The result type of a tensor-valued call (shape, dtype).
inline const ir::TypeNode& result_type(const ir::CallNode& call) { return ir::as_tensor(call.type); }
// Field i of a tuple-valued call's result type.
inline const ir::TypeNode& result_field(const ir::CallNode& call, size_t i) {
  return ir::as_tensor(call.type->fields.at(i));
}

// Reads t at the output indices `idx` under numpy broadcasting (t right-aligned; extent-1 axes
// read index 0).
inline Expr broadcast_read(const te::Tensor& t, const std::vector<Expr>& idx) {
  const size_t off = idx.size() - t.ndim();
  std::vector<Expr> i;
  for (size_t d = 0; d < t.ndim(); ++d) i.push_back(t.shape()[d] == 1 ? tir::int_imm(0) : idx[off + d]);
  return t(i);
}

// A constant of dtype t holding v; for f32, v is first rounded to float (as `static_cast<float>`
// in the reference kernels), so the C literal denotes exactly that float.
inline Expr cst(DType t, double v) {
  if (t == DType::f32) return tir::float_imm(static_cast<double>(static_cast<float>(v)), t);
  return tir::const_of(t, v);
}

// isnan(x) for floats; false for other dtypes.
inline Expr is_nan(const Expr& x) {
  if (!is_float(x->dtype)) return tir::int_imm(0, DType::boolean);
  return tir::call("isnan", DType::boolean, {x});
}

inline Expr math(const char* fn, const Expr& x) { return tir::call(fn, x->dtype, {x}); }

// A compute over the call's result shape, named after the op.
inline te::Tensor compute_like(const ir::CallNode& call, const std::string& name,
                               const std::function<Expr(const std::vector<Expr>&)>& body) {
  return te::compute(result_type(call).shape, body, name);
}

// A concatenation's operands that are not empty along the axis, each with where its range starts
// in the result (concatenate and concatenate.nhwc).
struct ConcatParts {
  std::vector<te::Tensor> parts;
  std::vector<int64_t> begin;
};
inline ConcatParts concat_parts(const std::vector<te::Tensor>& in, size_t axis) {
  ConcatParts p;
  int64_t at = 0;
  for (const te::Tensor& t : in) {
    if (t.shape()[axis] == 0) continue;
    p.parts.push_back(t);
    p.begin.push_back(at);
    at += t.shape()[axis];
  }
  return p;
}

}  // namespace sy::topi
