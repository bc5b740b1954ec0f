// Type relations of the neural-network ops: convolutions, matmul/dense, normalisations, softmax,
// pooling, padding, depth/space rearrangement and resize.
#include <algorithm>

#include "ops/attrs.h"
#include "ops/relation_util.h"

namespace sy::ops {
namespace {

using ir::Type;

// Optional 1-d bias of `n` entries at args[i] with the dtype of `like`.
void check_bias(const std::string& op, const TypeList& args, size_t i, int64_t n, const ir::TypeNode& like,
                const char* like_what) {
  if (args.size() <= i) return;
  const auto& b = tensor_arg(op, args, i, "bias");
  if (b.shape != Shape{n}) fail(op, "bias must have shape ", shape_str(Shape{n}), ", got ", shape_str(b.shape));
  check_same_dtype(op, b, "bias", like, like_what);
}

// A per-channel parameter of shape `want` with the dtype of x.
void check_param(const std::string& op, const TypeList& args, size_t i, const char* what, const Shape& want,
                 const ir::TypeNode& x) {
  const auto& p = tensor_arg(op, args, i, what);
  if (p.shape != want) fail(op, what, " must have shape ", shape_str(want), ", got ", shape_str(p.shape));
  check_same_dtype(op, p, what, x, "x");
}

void check_conv_attrs(const std::string& op, const std::vector<int64_t>& strides,
                      const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
  check_len(op, "strides", strides, 2);
  check_all_positive(op, "strides", strides);
  check_len(op, "padding", padding, 4);
  check_all_non_negative(op, "padding", padding);
  check_len(op, "dilation", dilation, 2);
  check_all_positive(op, "dilation", dilation);
  if (groups < 1) fail(op, "groups must be >= 1, got ", groups);
}

void check_kernel_dims(const std::string& op, const ir::TypeNode& w) {
  if (w.shape[2] < 1 || w.shape[3] < 1) fail(op, "weight has an empty kernel, shape ", shape_str(w.shape));
}

Type conv2d(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<Conv2dAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& w = tensor_arg(op, args, 1, "weight");
  check_rank(op, x, "data (NCHW)", 4);
  check_rank(op, w, "weight (OIHW)", 4);
  check_float(op, x, "data");
  check_same_dtype(op, w, "weight", x, "data");
  check_conv_attrs(op, a.strides, a.padding, a.dilation, a.groups);
  check_kernel_dims(op, w);
  int64_t c = x.shape[1], o = w.shape[0], i = w.shape[1], g = a.groups;
  if (c % g != 0) fail(op, "data has ", c, " channels, not divisible by groups=", g);
  if (o % g != 0) fail(op, "weight has ", o, " output channels, not divisible by groups=", g);
  if (i * g != c)
    fail(op, "weight has ", i, " input channels per group, data has ", c, " channels (groups=", g, ")");
  check_bias(op, args, 2, o, x, "data");
  int64_t h = conv_out_dim(op, "height", x.shape[2], w.shape[2], a.strides[0], a.padding[0], a.padding[2],
                           a.dilation[0]);
  int64_t wd = conv_out_dim(op, "width", x.shape[3], w.shape[3], a.strides[1], a.padding[1], a.padding[3],
                            a.dilation[1]);
  return ir::tensor_type({x.shape[0], o, h, wd}, x.dtype);
}

Type conv2d_transpose(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<ConvTranspose2dAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& w = tensor_arg(op, args, 1, "weight");
  check_rank(op, x, "data (NCHW)", 4);
  check_rank(op, w, "weight (IOHW)", 4);
  check_float(op, x, "data");
  check_same_dtype(op, w, "weight", x, "data");
  check_conv_attrs(op, a.strides, a.padding, a.dilation, a.groups);
  check_len(op, "output_padding", a.output_padding, 2);
  check_all_non_negative(op, "output_padding", a.output_padding);
  for (size_t k = 0; k < 2; ++k)
    if (a.output_padding[k] >= a.strides[k] && a.output_padding[k] >= a.dilation[k])
      fail(op, "output_padding ", list_str(a.output_padding), " must be smaller than strides ",
           list_str(a.strides), " or dilation ", list_str(a.dilation));
  check_kernel_dims(op, w);
  int64_t c = x.shape[1], g = a.groups;
  if (c % g != 0) fail(op, "data has ", c, " channels, not divisible by groups=", g);
  if (w.shape[0] != c) fail(op, "weight has ", w.shape[0], " input channels, data has ", c);
  int64_t o = checked_mul(op, w.shape[1], g);
  check_bias(op, args, 2, o, x, "data");
  int64_t out[2];
  const char* names[2] = {"height", "width"};
  for (size_t k = 0; k < 2; ++k) {
    int64_t in = x.shape[2 + k];
    int64_t grown = checked_add(op, checked_mul(op, a.strides[k], in - 1), a.output_padding[k]);
    int64_t window = checked_add(op, checked_mul(op, w.shape[2 + k] - 1, a.dilation[k]), 1);
    out[k] = checked_add(op, grown, window) - checked_add(op, a.padding[k], a.padding[k + 2]);
    if (out[k] < 1)
      fail(op, "output ", names[k], " would be ", out[k], " (input ", names[k], " ", in, ", padding ",
           list_str(a.padding), ")");
  }
  return ir::tensor_type({x.shape[0], o, out[0], out[1]}, x.dtype);
}

Type matmul(const std::string& op, const TypeList& args, const ir::Attrs&) {
  const auto& a = tensor_arg(op, args, 0, "lhs");
  const auto& b = tensor_arg(op, args, 1, "rhs");
  check_numeric(op, a, "lhs");
  check_same_dtype(op, a, "lhs", b, "rhs");
  if (a.shape.empty() || b.shape.empty())
    fail(op, "operands must have rank >= 1, got ", shape_str(a.shape), " and ", shape_str(b.shape));
  // Numpy: a 1-d lhs gets a leading 1, a 1-d rhs a trailing 1, both removed from the result.
  Shape sa = a.shape, sb = b.shape;
  bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), k2 = sb[sb.size() - 2], n = sb.back();
  if (k != k2)
    fail(op, "lhs of shape ", shape_str(a.shape), " has ", k, " columns, rhs of shape ", shape_str(b.shape), " has ",
         k2, " rows");
  Shape batch = broadcast_shapes(op, Shape(sa.begin(), sa.end() - 2), "lhs batch dims",
                                 Shape(sb.begin(), sb.end() - 2), "rhs batch dims");
  if (!a_vec) batch.push_back(m);
  if (!b_vec) batch.push_back(n);
  return ir::tensor_type(std::move(batch), a.dtype);
}

Type dense(const std::string& op, const TypeList& args, const ir::Attrs&) {
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& w = tensor_arg(op, args, 1, "weight");
  check_min_rank(op, x, "data", 1);
  check_rank(op, w, "weight ([N, K])", 2);
  check_numeric(op, x, "data");
  check_same_dtype(op, w, "weight", x, "data");
  if (x.shape.back() != w.shape[1])
    fail(op, "data of shape ", shape_str(x.shape), " has ", x.shape.back(), " features, weight of shape ",
         shape_str(w.shape), " expects ", w.shape[1]);
  check_bias(op, args, 2, w.shape[0], x, "data");
  Shape out = x.shape;
  out.back() = w.shape[0];
  return ir::tensor_type(std::move(out), x.dtype);
}

Type batch_norm(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  attrs_as<BatchNormAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "x");
  check_min_rank(op, x, "x", 2);
  check_float(op, x, "x");
  Shape c{x.shape[1]};
  const char* names[] = {"scale", "bias", "mean", "var"};
  for (size_t i = 0; i < 4; ++i) check_param(op, args, i + 1, names[i], c, x);
  return ir::tensor_type(x.shape, x.dtype);
}

Type layer_norm(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<LayerNormAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "x");
  check_float(op, x, "x");
  check_axis(op, "axis", a.axis, x.shape.size());
  Shape want(x.shape.begin() + a.axis, x.shape.end());
  check_param(op, args, 1, "scale", want, x);
  if (args.size() > 2) check_param(op, args, 2, "bias", want, x);
  return ir::tensor_type(x.shape, x.dtype);
}

Type instance_norm(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  attrs_as<EpsilonAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "x");
  check_min_rank(op, x, "x", 3);
  check_float(op, x, "x");
  Shape c{x.shape[1]};
  check_param(op, args, 1, "scale", c, x);
  check_param(op, args, 2, "bias", c, x);
  return ir::tensor_type(x.shape, x.dtype);
}

Type lrn(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<LRNAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "x");
  check_min_rank(op, x, "x", 3);
  check_float(op, x, "x");
  if (a.size < 1) fail(op, "size must be >= 1, got ", a.size);
  return ir::tensor_type(x.shape, x.dtype);
}

Type softmax(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<AxisAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "x");
  check_float(op, x, "x");
  check_axis(op, "axis", a.axis, x.shape.size());
  return ir::tensor_type(x.shape, x.dtype);
}

Type pool2d(const std::string& op, const TypeList& args, const ir::Attrs& attrs, bool float_only) {
  const auto& a = attrs_as<Pool2dAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_rank(op, x, "data (NCHW)", 4);
  if (float_only) check_float(op, x, "data");
  else check_numeric(op, x, "data");
  check_len(op, "kernel", a.kernel, 2);
  check_all_positive(op, "kernel", a.kernel);
  check_len(op, "strides", a.strides, 2);
  check_all_positive(op, "strides", a.strides);
  check_len(op, "padding", a.padding, 4);
  check_all_non_negative(op, "padding", a.padding);
  check_len(op, "dilation", a.dilation, 2);
  check_all_positive(op, "dilation", a.dilation);
  if (a.p < 1) fail(op, "p must be >= 1, got ", a.p);
  int64_t h = pool_out_dim(op, "height", x.shape[2], a.kernel[0], a.strides[0], a.padding[0], a.padding[2],
                           a.dilation[0], a.ceil_mode);
  int64_t w = pool_out_dim(op, "width", x.shape[3], a.kernel[1], a.strides[1], a.padding[1], a.padding[3],
                           a.dilation[1], a.ceil_mode);
  return ir::tensor_type({x.shape[0], x.shape[1], h, w}, x.dtype);
}

Type global_pool2d(const std::string& op, const TypeList& args, bool float_only) {
  const auto& x = tensor_arg(op, args, 0, "data");
  check_rank(op, x, "data (NCHW)", 4);
  if (float_only) check_float(op, x, "data");
  else check_numeric(op, x, "data");
  return ir::tensor_type({x.shape[0], x.shape[1], 1, 1}, x.dtype);
}

Type pad(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<PadAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  size_t rank = x.shape.size();
  check_len(op, "pads", a.pads, 2 * rank);
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && a.mode != "wrap")
    fail(op, "mode must be constant, reflect, edge or wrap, got '", a.mode, "'");
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = x.shape[i], b = a.pads[i], e = a.pads[i + rank];
    out[i] = checked_add(op, checked_add(op, d, b), e);
    if (out[i] < 0)
      fail(op, "pads ", list_str(a.pads), " crop axis ", i, " of extent ", d, " to ", out[i]);
    if (a.mode == "constant" || (b <= 0 && e <= 0)) continue;
    // Non-constant modes read padding values from the input itself.
    if (d == 0) fail(op, "cannot pad empty axis ", i, " in ", a.mode, " mode");
    if (a.mode == "reflect" && (b >= d || e >= d))
      fail(op, "reflect padding ", list_str(a.pads), " must be smaller than the extent ", d, " of axis ", i);
  }
  return ir::tensor_type(std::move(out), x.dtype);
}

Type depth_to_space(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<DepthToSpaceAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_rank(op, x, "data (NCHW)", 4);
  if (a.blocksize < 1) fail(op, "blocksize must be >= 1, got ", a.blocksize);
  if (a.mode != "DCR" && a.mode != "CRD") fail(op, "mode must be DCR or CRD, got '", a.mode, "'");
  int64_t b = a.blocksize, c = x.shape[1], bb = checked_mul(op, b, b);
  if (c % bb != 0) fail(op, "data has ", c, " channels, not divisible by blocksize^2=", bb);
  return ir::tensor_type({x.shape[0], c / bb, checked_mul(op, x.shape[2], b), checked_mul(op, x.shape[3], b)},
                         x.dtype);
}

Type space_to_depth(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<BlockSizeAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_rank(op, x, "data (NCHW)", 4);
  if (a.blocksize < 1) fail(op, "blocksize must be >= 1, got ", a.blocksize);
  int64_t b = a.blocksize;
  if (x.shape[2] % b != 0 || x.shape[3] % b != 0)
    fail(op, "spatial size ", x.shape[2], "x", x.shape[3], " is not divisible by blocksize=", b);
  return ir::tensor_type({x.shape[0], checked_mul(op, x.shape[1], checked_mul(op, b, b)), x.shape[2] / b,
                          x.shape[3] / b},
                         x.dtype);
}

Type resize2d(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<Resize2dAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  check_rank(op, x, "data (NCHW)", 4);
  check_len(op, "size", a.size, 2);
  check_all_positive(op, "size", a.size);
  if (!(a.scale_h >= 0) || !(a.scale_w >= 0)) fail(op, "scale_h and scale_w must be positive (or 0: output/input)");
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    fail(op, "mode must be nearest, linear or cubic, got '", a.mode, "'");
  if (a.mode != "nearest") check_float(op, x, "data");
  const std::string& ct = a.coordinate_transformation_mode;
  // tf_crop_and_resize needs a region of interest, which the attributes cannot carry.
  if (ct != "half_pixel" && ct != "pytorch_half_pixel" && ct != "align_corners" && ct != "asymmetric" &&
      ct != "tf_half_pixel_for_nn")
    fail(op, "coordinate_transformation_mode must be half_pixel, pytorch_half_pixel, align_corners, "
             "asymmetric or tf_half_pixel_for_nn, got '", ct, "'");
  const std::string& nm = a.nearest_mode;
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
    fail(op, "nearest_mode must be round_prefer_floor, round_prefer_ceil, floor or ceil, got '", nm, "'");
  return ir::tensor_type({x.shape[0], x.shape[1], a.size[0], a.size[1]}, x.dtype);
}

Type grid_sample(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<GridSampleAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& g = tensor_arg(op, args, 1, "grid");
  check_rank(op, x, "data (NCHW)", 4);
  check_rank(op, g, "grid (N, H_out, W_out, 2)", 4);
  check_float(op, x, "data");
  check_same_dtype(op, x, "data", g, "grid");
  if (g.shape[0] != x.shape[0]) fail(op, "grid has batch ", g.shape[0], ", data has ", x.shape[0]);
  if (g.shape[3] != 2) fail(op, "grid's last axis must be 2 (x, y), got ", g.shape[3]);
  if (a.mode != "bilinear" && a.mode != "nearest" && a.mode != "bicubic")
    fail(op, "mode must be bilinear, nearest or bicubic, got '", a.mode, "'");
  if (a.padding_mode != "zeros" && a.padding_mode != "border" && a.padding_mode != "reflection")
    fail(op, "padding_mode must be zeros, border or reflection, got '", a.padding_mode, "'");
  return ir::tensor_type({x.shape[0], x.shape[1], g.shape[1], g.shape[2]}, x.dtype);
}

Type roi_align(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<RoiAlignAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& rois = tensor_arg(op, args, 1, "rois");
  const auto& idx = tensor_arg(op, args, 2, "batch_indices");
  check_rank(op, x, "data (NCHW)", 4);
  check_rank(op, rois, "rois (R, 4)", 2);
  check_rank(op, idx, "batch_indices (R)", 1);
  check_float(op, x, "data");
  check_same_dtype(op, x, "data", rois, "rois");
  if (idx.dtype != DType::i64 && idx.dtype != DType::i32) fail(op, "batch_indices must be int64 or int32");
  if (rois.shape[1] != 4) fail(op, "rois must have 4 columns (x1, y1, x2, y2), got ", rois.shape[1]);
  if (idx.shape[0] != rois.shape[0]) fail(op, "batch_indices has ", idx.shape[0], " entries for ", rois.shape[0], " rois");
  if (a.mode != "avg" && a.mode != "max") fail(op, "mode must be avg or max, got '", a.mode, "'");
  if (a.output_height < 1 || a.output_width < 1)
    fail(op, "output_height and output_width must be positive, got ", a.output_height, " and ", a.output_width);
  if (a.sampling_ratio < 0) fail(op, "sampling_ratio must be 0 (adaptive) or positive, got ", a.sampling_ratio);
  return ir::tensor_type({rois.shape[0], x.shape[1], a.output_height, a.output_width}, x.dtype);
}

Type max_roi_pool(const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
  const auto& a = attrs_as<MaxRoiPoolAttrs>(op, attrs);
  const auto& x = tensor_arg(op, args, 0, "data");
  const auto& rois = tensor_arg(op, args, 1, "rois");
  check_rank(op, x, "data (NCHW)", 4);
  check_rank(op, rois, "rois (R, 5)", 2);
  check_float(op, x, "data");
  check_same_dtype(op, x, "data", rois, "rois");
  if (rois.shape[1] != 5) fail(op, "rois must have 5 columns (batch index, x1, y1, x2, y2), got ", rois.shape[1]);
  if (a.pooled_shape.size() != 2 || a.pooled_shape[0] < 1 || a.pooled_shape[1] < 1)
    fail(op, "pooled_shape must be two positive sizes, got ", a.pooled_shape.size(), " values");
  return ir::tensor_type({rois.shape[0], x.shape[1], a.pooled_shape[0], a.pooled_shape[1]}, x.dtype);
}

}  // namespace

void register_nn_ops(OpRegistry& r) {
  define_op(r, OpCode::Conv2d, 2, 3, conv2d);
  define_op(r, OpCode::ConvTranspose2d, 2, 3, conv2d_transpose);
  define_op(r, OpCode::MatMul, 2, 2, matmul);
  define_op(r, OpCode::Dense, 2, 3, dense);
  define_op(r, OpCode::BatchNorm, 5, 5, batch_norm);
  define_op(r, OpCode::LayerNorm, 2, 3, layer_norm);
  define_op(r, OpCode::InstanceNorm, 3, 3, instance_norm);
  define_op(r, OpCode::LRN, 1, 1, lrn);
  define_op(r, OpCode::Softmax, 1, 1, softmax);
  define_op(r, OpCode::LogSoftmax, 1, 1, softmax);
  define_op(r, OpCode::MaxPool2d, 1, 1, [](const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
    return pool2d(op, args, attrs, false);
  });
  define_op(r, OpCode::AvgPool2d, 1, 1, [](const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
    return pool2d(op, args, attrs, true);
  });
  define_op(r, OpCode::LpPool2d, 1, 1, [](const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
    return pool2d(op, args, attrs, true);
  });
  define_op(r, OpCode::GlobalAvgPool2d, 1, 1, [](const std::string& op, const TypeList& args, const ir::Attrs&) {
    return global_pool2d(op, args, true);
  });
  define_op(r, OpCode::GlobalMaxPool2d, 1, 1, [](const std::string& op, const TypeList& args, const ir::Attrs&) {
    return global_pool2d(op, args, false);
  });
  define_op(r, OpCode::Pad, 1, 1, pad);
  define_op(r, OpCode::DepthToSpace, 1, 1, depth_to_space);
  define_op(r, OpCode::SpaceToDepth, 1, 1, space_to_depth);
  define_op(r, OpCode::Resize2d, 1, 1, resize2d);
  define_op(r, OpCode::GridSample, 2, 2, grid_sample);
  define_op(r, OpCode::RoiAlign, 3, 3, roi_align);
  define_op(r, OpCode::MaxRoiPool, 2, 2, max_roi_pool);
}

}  // namespace sy::ops
