// cumsum, scatter_elements, scatter_nd, roi_align, max_roi_pool and det: one extern stage each, calling the C functions of
// extern_kernels.cpp (a sequential scan / data-dependent writes in the order the reference
// applies them, so duplicate indices behave the same).
#include <bit>

#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"
#include "topi/extern_kernels.h"
#include "topi/topi.h"
#include "topi/transform.h"
#include "topi/util.h"

namespace sy::topi {

using ops::OpCode;
using tir::int_imm;

namespace {

using Computes = std::vector<te::Tensor>;

int64_t dims_product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= s[d];
  return n;
}

Expr code(DType t) { return int_imm(static_cast<int64_t>(t)); }

// A double passed to an extern function as its bits (the functions take int64 scalars).
Expr bits_of(double v) { return int_imm(std::bit_cast<int64_t>(v)); }

int64_t reduction_code(const std::string& r, const std::string& op) {
  if (r == "none") return kScatterNone;
  if (r == "add") return kScatterAdd;
  if (r == "mul") return kScatterMul;
  if (r == "max") return kScatterMax;
  if (r == "min") return kScatterMin;
  throw Error(op + ": unknown reduction '" + r + "' (expected none, add, mul, max or min)");
}

// Shape dims padded with 1 to kExternMaxRank scalar arguments.
void push_dims(std::vector<Expr>& args, const Shape& s, const std::string& op) {
  if (static_cast<int64_t>(s.size()) > kExternMaxRank)
    throw Error(op + ": rank " + std::to_string(s.size()) + " is above the native path's limit of " +
                std::to_string(kExternMaxRank));
  for (int64_t d = 0; d < kExternMaxRank; ++d)
    args.push_back(int_imm(d < static_cast<int64_t>(s.size()) ? s[static_cast<size_t>(d)] : 1));
}

Computes cumsum(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0);
  const auto& a = call.attrs_as<ops::CumSumAttrs>();
  if (x.dtype() == DType::boolean) throw Error("cumsum: not defined for bool");
  const size_t axis = static_cast<size_t>(a.axis);
  const Shape& s = x.shape();
  return {te::extern_op("cumsum", s, x.dtype(), {x}, "sy_topi_cumsum",
                        {code(x.dtype()), int_imm(dims_product(s, 0, axis)), int_imm(s[axis]),
                         int_imm(dims_product(s, axis + 1, s.size())), int_imm(a.exclusive), int_imm(a.reverse)})};
}

Computes scatter_elements(const ir::CallNode& call, const Computes& in) {
  const te::Tensor data = in.at(0), idx = in.at(1), up = in.at(2);
  const auto& a = call.attrs_as<ops::ScatterAttrs>();
  const std::string op = "scatter_elements";
  std::vector<Expr> args = {code(data.dtype()), code(idx.dtype()), int_imm(reduction_code(a.reduction, op)),
                            int_imm(static_cast<int64_t>(data.ndim())), int_imm(a.axis)};
  push_dims(args, data.shape(), op);
  push_dims(args, idx.shape(), op);
  return {te::extern_op(op, data.shape(), data.dtype(), {data, idx, up}, "sy_topi_scatter_elements", args)};
}

Computes scatter_nd(const ir::CallNode& call, const Computes& in) {
  const te::Tensor data = in.at(0), idx = in.at(1), up = in.at(2);
  const auto& a = call.attrs_as<ops::ScatterAttrs>();
  const std::string op = "scatter_nd";
  const int64_t q = idx.shape().back();
  std::vector<Expr> args = {code(data.dtype()), code(idx.dtype()), int_imm(reduction_code(a.reduction, op)),
                            int_imm(static_cast<int64_t>(data.ndim())), int_imm(q),
                            int_imm(dims_product(idx.shape(), 0, idx.ndim() - 1))};
  push_dims(args, data.shape(), op);
  return {te::extern_op(op, data.shape(), data.dtype(), {data, idx, up}, "sy_topi_scatter_nd", args)};
}

// image.roi_align and image.max_roi_pool: their regions' sample grids and bins depend on the data,
// so one extern stage over the whole output each.
Computes roi_align(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0), rois = in.at(1), idx = in.at(2);
  const auto& a = call.attrs_as<ops::RoiAlignAttrs>();
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64) throw Error("image.roi_align: needs float data");
  const Shape& s = x.shape();
  const int64_t R = rois.shape()[0];
  return {te::extern_op("roi_align", {R, s[1], a.output_height, a.output_width}, x.dtype(), {x, rois, idx},
                        "sy_topi_roi_align",
                        {code(x.dtype()), code(idx.dtype()), int_imm(s[0]), int_imm(s[1]), int_imm(s[2]), int_imm(s[3]),
                         int_imm(R), int_imm(a.output_height), int_imm(a.output_width), int_imm(a.sampling_ratio),
                         bits_of(a.spatial_scale), int_imm(a.mode == "max"), int_imm(a.half_pixel)})};
}

Computes max_roi_pool(const ir::CallNode& call, const Computes& in) {
  const te::Tensor x = in.at(0), rois = in.at(1);
  const auto& a = call.attrs_as<ops::MaxRoiPoolAttrs>();
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64) throw Error("image.max_roi_pool: needs float data");
  const Shape& s = x.shape();
  const int64_t R = rois.shape()[0];
  return {te::extern_op("max_roi_pool", {R, s[1], a.pooled_shape[0], a.pooled_shape[1]}, x.dtype(), {x, rois},
                        "sy_topi_max_roi_pool",
                        {code(x.dtype()), int_imm(s[0]), int_imm(s[1]), int_imm(s[2]), int_imm(s[3]), int_imm(R),
                         int_imm(a.pooled_shape[0]), int_imm(a.pooled_shape[1]), bits_of(a.spatial_scale)})};
}

// det: Gaussian elimination, whose pivots depend on the data.
Computes det(const ir::CallNode&, const Computes& in) {
  const te::Tensor x = in.at(0);
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64) throw Error("det: needs float data");
  const Shape& s = x.shape();
  const Shape out(s.begin(), s.end() - 2);
  return {te::extern_op("det", out, x.dtype(), {x}, "sy_topi_det",
                        {code(x.dtype()), int_imm(shape_numel(out)), int_imm(s.back())})};
}

}  // namespace

void register_transform_externs(Registry& r) {
  auto add = [&](OpCode op, Computes (*f)(const ir::CallNode&, const Computes&)) {
    OpImpl impl;
    impl.compute = f;
    r.add(op, std::move(impl));
  };
  add(OpCode::CumSum, cumsum);
  add(OpCode::ScatterElements, scatter_elements);
  add(OpCode::ScatterND, scatter_nd);
  add(OpCode::RoiAlign, roi_align);
  add(OpCode::MaxRoiPool, max_roi_pool);
  add(OpCode::Det, det);
}

}  // namespace sy::topi
