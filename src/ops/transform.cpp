// Type relations of the tensor transforms: reshape, transpose, concat, split, slicing, gathers,
// broadcast/tile, trilu, one_hot, cumsum and scatters.
#include <algorithm>

#include "ops/attrs.h"
#include "ops/relation_util.h"

namespace sy::ops {
namespace {

using ir::Type;

Type reshape(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<ReshapeAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_all_non_negative(op, "newshape", a.newshape);
  int64_t want = checked_numel(op, a.newshape), have = checked_numel(op, x.shape);
  if (want != have)
    fail(op, "newshape ", list_str(a.newshape), " has ", want, " elements, data of shape ", shape_str(x.shape),
         " has ", have);
  return ir::tensor_type(a.newshape, x.dtype);
}

Type transpose(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<TransposeAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  size_t rank = x.shape.size();
  check_len(op, "perm", a.perm, rank);
  std::vector<bool> seen(rank, false);
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t p = a.perm[i];
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
      fail(op, "perm ", list_str(a.perm), " is not a permutation of 0..", static_cast<int64_t>(rank) - 1);
    seen[static_cast<size_t>(p)] = true;
    out[i] = x.shape[static_cast<size_t>(p)];
  }
  return ir::tensor_type(std::move(out), x.dtype);
}

Type concat(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<AxisAttrs>(op, attrs);
  const auto& first = tensor_arg(op, args, 0, "input");
  size_t rank = first.shape.size();
  check_axis(op, "axis", a.axis, rank);
  auto axis = static_cast<size_t>(a.axis);
  Shape out = first.shape;
  for (size_t i = 1; i < args.size(); ++i) {
    const auto& t = tensor_arg(op, args, i, "input");
    if (t.dtype != first.dtype)
      fail(op, "input ", i, " has dtype ", dtype_name(t.dtype), ", input 0 has ", dtype_name(first.dtype));
    bool ok = t.shape.size() == rank;
    for (size_t d = 0; ok && d < rank; ++d) ok = d == axis || t.shape[d] == first.shape[d];
    if (!ok)
      fail(op, "input ", i, " of shape ", shape_str(t.shape), " does not match input 0 of shape ",
           shape_str(first.shape), " except on axis ", axis);
    out[axis] = checked_add(op, out[axis], t.shape[axis]);
  }
  return ir::tensor_type(std::move(out), first.dtype);
}

Type split(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<SplitAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_axis(op, "axis", a.axis, x.shape.size());
  if (a.sizes.empty()) fail(op, "sizes must not be empty");
  check_all_non_negative(op, "sizes", a.sizes);
  auto axis = static_cast<size_t>(a.axis);
  int64_t sum = 0;
  for (int64_t s : a.sizes) sum = checked_add(op, sum, s);
  if (sum != x.shape[axis])
    fail(op, "sizes ", list_str(a.sizes), " sum to ", sum, ", axis ", axis, " of data has extent ", x.shape[axis]);
  std::vector<Type> fields;
  for (int64_t s : a.sizes) {
    Shape sh = x.shape;
    sh[axis] = s;
    fields.push_back(ir::tensor_type(std::move(sh), x.dtype));
  }
  return ir::tuple_type(std::move(fields));
}

Type strided_slice(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<StridedSliceAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  size_t rank = x.shape.size();
  check_len(op, "begin", a.begin, rank);
  check_len(op, "end", a.end, rank);
  check_len(op, "strides", a.strides, rank);
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = x.shape[i], b = a.begin[i], e = a.end[i], s = a.strides[i];
    if (s == 0) fail(op, "strides ", list_str(a.strides), " has a zero step on axis ", i);
    if (b < 0 || b > d) fail(op, "begin ", list_str(a.begin), " out of [0, ", d, "] on axis ", i);
    if (e < -1 || e > d) fail(op, "end ", list_str(a.end), " out of [-1, ", d, "] on axis ", i);
    // count = max(0, ceil((end - begin) / step)); |end - begin| <= dim + 1, so only the step can be
    // extreme (-INT64_MIN overflows), hence the unsigned magnitude.
    int64_t dist = s > 0 ? e - b : b - e;
    uint64_t mag = s > 0 ? static_cast<uint64_t>(s) : 0 - static_cast<uint64_t>(s);
    int64_t n = dist <= 0 ? 0 : static_cast<int64_t>((static_cast<uint64_t>(dist) - 1) / mag + 1);
    // A backward slice reads x[begin] first, so begin must be a valid index.
    if (s < 0 && n > 0 && b >= d)
      fail(op, "begin ", list_str(a.begin), " must be < ", d, " on axis ", i, " for a negative step");
    out[i] = n;
  }
  return ir::tensor_type(std::move(out), x.dtype);
}

Type take(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<AxisAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& idx = tensor_arg(op, args, 1, "indices");
  check_index_dtype(op, idx, "indices");
  check_axis(op, "axis", a.axis, x.shape.size());
  auto axis = static_cast<size_t>(a.axis);
  Shape out(x.shape.begin(), x.shape.begin() + static_cast<ptrdiff_t>(axis));
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + static_cast<ptrdiff_t>(axis) + 1, x.shape.end());
  return ir::tensor_type(std::move(out), x.dtype);
}

Type gather_elements(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<AxisAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& idx = tensor_arg(op, args, 1, "indices");
  check_index_dtype(op, idx, "indices");
  check_axis(op, "axis", a.axis, x.shape.size());
  if (idx.shape.size() != x.shape.size())
    fail(op, "indices of shape ", shape_str(idx.shape), " must have the rank of data of shape ", shape_str(x.shape));
  return ir::tensor_type(idx.shape, x.dtype);
}

Type gather_nd(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<BatchDimsAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& idx = tensor_arg(op, args, 1, "indices");
  check_index_dtype(op, idx, "indices");
  check_min_rank(op, x, "data", 1);
  check_min_rank(op, idx, "indices", 1);
  int64_t r = static_cast<int64_t>(x.shape.size()), q = static_cast<int64_t>(idx.shape.size());
  int64_t b = a.batch_dims;
  if (b < 0 || b >= std::min(q, r))
    fail(op, "batch_dims=", b, " must be in [0, ", std::min(q, r) - 1, "] for data of shape ", shape_str(x.shape),
         " and indices of shape ", shape_str(idx.shape));
  for (int64_t i = 0; i < b; ++i)
    if (x.shape[static_cast<size_t>(i)] != idx.shape[static_cast<size_t>(i)])
      fail(op, "batch dim ", i, " differs: data ", shape_str(x.shape), ", indices ", shape_str(idx.shape));
  int64_t m = idx.shape.back();
  if (m < 1 || m > r - b)
    fail(op, "indices last dim ", m, " must be in [1, ", r - b, "] (data rank ", r, ", batch_dims ", b, ")");
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + (b + m), x.shape.end());
  return ir::tensor_type(std::move(out), x.dtype);
}

// ONNX Expand: the result is the bidirectional broadcast of the input shape and `shape`.
Type broadcast_to(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<ShapeAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_all_non_negative(op, "shape", a.shape);
  return ir::tensor_type(broadcast_shapes(op, x.shape, "data", a.shape, "target"), x.dtype);
}

Type tile(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<RepsAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_len(op, "reps", a.reps, x.shape.size());
  check_all_non_negative(op, "reps", a.reps);
  Shape out = x.shape;
  for (size_t i = 0; i < out.size(); ++i) out[i] = checked_mul(op, out[i], a.reps[i]);
  return ir::tensor_type(std::move(out), x.dtype);
}

Type trilu(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  attrs_as<TriluAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_min_rank(op, x, "data", 2);
  return ir::tensor_type(x.shape, x.dtype);
}

Type one_hot(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<OneHotAttrs>(op, attrs);
  const auto& idx = tensor_arg(op, args, 0, "indices");
  const auto& v = tensor_arg(op, args, 1, "values");
  check_numeric(op, idx, "indices");
  if (v.shape != Shape{2}) fail(op, "values must have shape (2,) [off, on], got ", shape_str(v.shape));
  if (a.depth < 1) fail(op, "depth must be >= 1, got ", a.depth);
  check_axis(op, "axis", a.axis, idx.shape.size() + 1);
  Shape out = idx.shape;
  out.insert(out.begin() + a.axis, a.depth);
  return ir::tensor_type(std::move(out), v.dtype);
}

Type cumsum(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<CumSumAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_numeric(op, x, "data");
  check_axis(op, "axis", a.axis, x.shape.size());
  return ir::tensor_type(x.shape, x.dtype);
}

Type det(const std::string& op, const TypeList& args, const ir::Attrs&) {
  const auto& x = tensor_arg(op, args, 0, "x");
  check_float(op, x, "x");
  const size_t r = x.shape.size();
  if (r < 2 || x.shape[r - 1] != x.shape[r - 2])
    fail(op, "x must be square matrices [..., M, M], got ", shape_str(x.shape));
  return ir::tensor_type(Shape(x.shape.begin(), x.shape.end() - 2), x.dtype);
}

void check_reduction(const std::string& op, const ScatterAttrs& a) {
  const std::string& r = a.reduction;
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    fail(op, "reduction must be none, add, mul, max or min, got '", r, "'");
}

Type scatter_elements(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<ScatterAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& idx = tensor_arg(op, args, 1, "indices");
  const auto& u = tensor_arg(op, args, 2, "updates");
  check_reduction(op, a);
  check_index_dtype(op, idx, "indices");
  check_same_dtype(op, u, "updates", x, "data");
  check_min_rank(op, x, "data", 1);
  check_axis(op, "axis", a.axis, x.shape.size());
  if (idx.shape.size() != x.shape.size())
    fail(op, "indices of shape ", shape_str(idx.shape), " must have the rank of data of shape ", shape_str(x.shape));
  if (u.shape != idx.shape)
    fail(op, "updates of shape ", shape_str(u.shape), " must have the shape of indices ", shape_str(idx.shape));
  return ir::tensor_type(x.shape, x.dtype);
}

Type scatter_nd(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<ScatterAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& idx = tensor_arg(op, args, 1, "indices");
  const auto& u = tensor_arg(op, args, 2, "updates");
  check_reduction(op, a);
  if (a.axis != 0) fail(op, "has no axis attribute (must be 0), got axis=", a.axis);
  check_index_dtype(op, idx, "indices");
  check_same_dtype(op, u, "updates", x, "data");
  check_min_rank(op, x, "data", 1);
  check_min_rank(op, idx, "indices", 1);
  int64_t k = idx.shape.back(), r = static_cast<int64_t>(x.shape.size());
  if (k < 1 || k > r) fail(op, "indices last dim ", k, " must be in [1, ", r, "] (data rank)");
  Shape want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), x.shape.begin() + k, x.shape.end());
  if (u.shape != want)
    fail(op, "updates must have shape ", shape_str(want), " (indices.shape[:-1] + data.shape[", k, ":]), got ",
         shape_str(u.shape));
  return ir::tensor_type(x.shape, x.dtype);
}

}  // namespace

void register_transform_ops(OpRegistry& r) {
  define_op(r, OpCode::Reshape, 1, 1, reshape);
  define_op(r, OpCode::Transpose, 1, 1, transpose);
  define_op(r, OpCode::Concat, 1, -1, concat);
  define_op(r, OpCode::Split, 1, 1, split);
  define_op(r, OpCode::StridedSlice, 1, 1, strided_slice);
  define_op(r, OpCode::Gather, 2, 2, take);
  define_op(r, OpCode::GatherElements, 2, 2, gather_elements);
  define_op(r, OpCode::GatherND, 2, 2, gather_nd);
  define_op(r, OpCode::BroadcastTo, 1, 1, broadcast_to);
  define_op(r, OpCode::Tile, 1, 1, tile);
  define_op(r, OpCode::Trilu, 1, 1, trilu);
  define_op(r, OpCode::OneHot, 2, 2, one_hot);
  define_op(r, OpCode::CumSum, 1, 1, cumsum);
  define_op(r, OpCode::Det, 1, 1, det);
  define_op(r, OpCode::ScatterElements, 3, 3, scatter_elements);
  define_op(r, OpCode::ScatterND, 3, 3, scatter_nd);
}

}  // namespace sy::ops
