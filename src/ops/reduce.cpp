// Type relations of the reductions, argmax/argmin and topk.
#include "ops/attrs.h"
#include "ops/relation_util.h"

namespace sy::ops {
namespace {

using ir::Type;

Type reduce(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<ReduceAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_numeric(op, x, "data");
  size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, false);
  for (size_t i = 0; i < a.axes.size(); ++i) {
    int64_t ax = a.axes[i];
    if (ax < 0 || ax >= static_cast<int64_t>(rank))
      fail(op, "axes ", list_str(a.axes), " out of range for rank ", rank);
    if (i > 0 && ax <= a.axes[i - 1]) fail(op, "axes ", list_str(a.axes), " must be sorted and unique");
    reduced[static_cast<size_t>(ax)] = true;
  }
  Shape out;
  for (size_t i = 0; i < rank; ++i) {
    if (!reduced[i]) out.push_back(x.shape[i]);
    else if (a.keepdims) out.push_back(1);
  }
  return ir::tensor_type(std::move(out), x.dtype);
}

Type arg_reduce(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<ArgReduceAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_numeric(op, x, "data");
  check_axis(op, "axis", a.axis, x.shape.size());
  auto axis = static_cast<size_t>(a.axis);
  if (x.shape[axis] == 0) fail(op, "cannot reduce empty axis ", axis, " of shape ", shape_str(x.shape));
  Shape out = x.shape;
  if (a.keepdims) out[axis] = 1;
  else out.erase(out.begin() + a.axis);
  return ir::tensor_type(std::move(out), DType::i64);
}

Type topk(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<TopKAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_numeric(op, x, "data");
  check_axis(op, "axis", a.axis, x.shape.size());
  auto axis = static_cast<size_t>(a.axis);
  if (a.k < 0 || a.k > x.shape[axis])
    fail(op, "k=", a.k, " must be in [0, ", x.shape[axis], "] (extent of axis ", axis, ")");
  Shape out = x.shape;
  out[axis] = a.k;
  return ir::tuple_type({ir::tensor_type(out, x.dtype), ir::tensor_type(out, DType::i64)});
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  for (OpCode c : {OpCode::ReduceSum, OpCode::ReduceMean, OpCode::ReduceMax, OpCode::ReduceMin, OpCode::ReduceProd,
                   OpCode::ReduceL1, OpCode::ReduceL2, OpCode::ReduceSumSquare, OpCode::ReduceLogSum,
                   OpCode::ReduceLogSumExp})
    define_op(r, c, 1, 1, reduce);
  define_op(r, OpCode::ArgMax, 1, 1, arg_reduce);
  define_op(r, OpCode::ArgMin, 1, 1, arg_reduce);
  define_op(r, OpCode::TopK, 1, 1, topk);
}

}  // namespace sy::ops
