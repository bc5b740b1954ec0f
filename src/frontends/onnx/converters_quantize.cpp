// Converters of ONNX linear quantization ops (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear) and integer/quantized matmul and convolution, composed of casts,
// integer or exact float64 arithmetic, rounding and clipping.
#include "frontends/onnx/converters.h"
#include "frontends/onnx/tensor_proto.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;

// A per-tensor (scalar) or per-axis (1-D along `axis`) parameter, shaped to broadcast against x.
ir::Expr broadcastable(NodeContext& c, const ir::Expr& p, const ir::Expr& x, const char* role) {
  const Shape& ps = ir::shape_of(p);
  if (shape_numel(ps) == 1) return c.reshape(p, {});
  if (ps.size() != 1) c.fail(std::string(role) + " must be a scalar or 1-D, got shape " + shape_str(ps));
  auto r = static_cast<int64_t>(ir::shape_of(x).size());
  if (c.opset() < 13) c.fail(std::string("per-axis ") + role + " needs opset 13");
  int64_t axis = c.axis(c.attr_int("axis", 1), r);
  if (ir::shape_of(x)[static_cast<size_t>(axis)] != ps[0])
    c.fail(std::string(role) + " has " + std::to_string(ps[0]) + " values, axis " + std::to_string(axis) + " has extent " +
           std::to_string(ir::shape_of(x)[static_cast<size_t>(axis)]));
  Shape s(static_cast<size_t>(r), 1);
  s[static_cast<size_t>(axis)] = ps[0];
  return c.reshape(p, s);
}

std::pair<double, double> quant_range(NodeContext& c, DType dt) {
  if (dt == DType::u8) return {0, 255};
  if (dt == DType::i8) return {-128, 127};
  c.unsupported("quantized dtype " + std::string(dtype_name(dt)) + " (only uint8 and int8)");
}

// y = saturate(round(x / scale) + zero_point), with x, scale, zero_point broadcastable.
ir::Expr quantize(NodeContext& c, ir::Expr x, const ir::Expr& scale, const ir::Expr& zp, DType to) {
  auto [lo, hi] = quant_range(c, to);
  ir::Expr q = c.op(OpCode::Round, {c.op(OpCode::Div, {c.cast(x, DType::f32), scale})});
  if (zp) q = c.op(OpCode::Add, {q, c.cast(zp, DType::f32)});
  ops::ClipAttrs clip;
  clip.min = lo;
  clip.max = hi;
  return c.cast(c.op(OpCode::Clip, {q}, clip), to);
}

Outs convert_quantize(NodeContext& c) {
  ir::Expr x = c.input(0, "x");
  ir::Expr scale = broadcastable(c, c.input(1, "y_scale"), x, "y_scale");
  ir::Expr zp = c.has_input(2) ? broadcastable(c, c.input(2, "y_zero_point"), x, "y_zero_point") : nullptr;
  DType to = zp ? ir::dtype_of(zp) : DType::u8;
  return {quantize(c, x, scale, zp, to)};
}

Outs convert_dequantize(NodeContext& c) {
  ir::Expr x = c.input(0, "x");
  DType xt = ir::dtype_of(x);
  if (xt != DType::u8 && xt != DType::i8 && xt != DType::i32) c.unsupported("dtype " + std::string(dtype_name(xt)) + " for x");
  ir::Expr scale = broadcastable(c, c.input(1, "x_scale"), x, "x_scale");
  ir::Expr v = c.cast(x, DType::f32);
  if (c.has_input(2)) v = c.op(OpCode::Sub, {v, c.cast(broadcastable(c, c.input(2, "x_zero_point"), x, "x_zero_point"), DType::f32)});
  return {c.op(OpCode::Mul, {v, scale})};
}

// uint8 quantization with scale and zero point from the data range (which always includes 0).
Outs convert_dynamic_quantize(NodeContext& c) {
  ir::Expr x = c.input(0, "x");
  if (ir::dtype_of(x) != DType::f32) c.fail("x must be float32");
  ops::ReduceAttrs all;
  for (size_t i = 0; i < ir::shape_of(x).size(); ++i) all.axes.push_back(static_cast<int64_t>(i));
  all.keepdims = false;
  ir::Expr zero = NodeContext::scalar(DType::f32, 0);
  ir::Expr mn = c.op(OpCode::Minimum, {c.op(OpCode::ReduceMin, {x}, all), zero});
  ir::Expr mx = c.op(OpCode::Maximum, {c.op(OpCode::ReduceMax, {x}, all), zero});
  ir::Expr scale = c.op(OpCode::Div, {c.op(OpCode::Sub, {mx, mn}), NodeContext::scalar(DType::f32, 255)});
  ops::ClipAttrs clip;
  clip.min = 0;
  clip.max = 255;
  ir::Expr zp_f = c.op(OpCode::Round, {c.op(OpCode::Clip, {c.op(OpCode::Sub, {zero, c.op(OpCode::Div, {mn, scale})})}, clip)});
  ir::Expr zp = c.cast(zp_f, DType::u8);
  return {quantize(c, x, scale, zp, DType::u8), scale, zp};
}

// x - zero_point in `dt` (exact for 8-bit data in int32 or float64). A 1-D zero point applies
// along `axis` (rows of a matrix A, output channels of a weight, ...).
ir::Expr centered(NodeContext& c, const ir::Expr& x, size_t zp_index, const char* role, int64_t axis, DType dt) {
  DType xt = ir::dtype_of(x);
  if (xt != DType::u8 && xt != DType::i8) c.unsupported("dtype " + std::string(dtype_name(xt)) + " (only uint8 and int8)");
  ir::Expr v = c.cast(x, dt);
  if (!c.has_input(zp_index)) return v;
  ir::Expr zp = c.input(zp_index, role);
  const Shape& zs = ir::shape_of(zp);
  if (shape_numel(zs) != 1) {
    if (zs.size() != 1) c.fail(std::string(role) + " must be a scalar or 1-D");
    Shape s(ir::shape_of(x).size(), 1);
    if (axis < 0 || axis >= static_cast<int64_t>(s.size()) || ir::shape_of(x)[static_cast<size_t>(axis)] != zs[0])
      c.fail(std::string(role) + " of shape " + shape_str(zs) + " does not match " + shape_str(ir::shape_of(x)));
    s[static_cast<size_t>(axis)] = zs[0];
    zp = c.reshape(zp, s);
  } else {
    zp = c.reshape(zp, {});
  }
  return c.op(OpCode::Sub, {v, c.cast(zp, dt)});
}

// The requantization multiplier s_a * s_b / s_y for a result of rank `rank`; s_a and s_b are scalars
// or 1-D along axis_a / axis_b of the result, s_y is a scalar.
ir::Expr requant_scale(NodeContext& c, size_t ia, int64_t axis_a, size_t ib, int64_t axis_b, size_t iy, int64_t rank) {
  auto shaped = [&](size_t i, const char* role, int64_t axis) {
    ir::Expr s = c.input(i, role);
    if (shape_numel(ir::shape_of(s)) == 1) return c.reshape(s, {});
    if (axis < 0) c.fail(std::string(role) + " must be a scalar");
    Shape sh(static_cast<size_t>(rank), 1);
    sh[static_cast<size_t>(axis)] = shape_numel(ir::shape_of(s));
    return c.reshape(s, sh);
  };
  return c.op(OpCode::Div, {c.op(OpCode::Mul, {shaped(ia, "a_scale", axis_a), shaped(ib, "b_scale", axis_b)}),
                            shaped(iy, "y_scale", -1)});
}

// y = saturate(round(acc * multiplier) + y_zero_point) in the dtype of y_zero_point.
ir::Expr requantize(NodeContext& c, const ir::Expr& acc, const ir::Expr& multiplier, size_t zp_index) {
  ir::Expr zp = c.has_input(zp_index) ? c.reshape(c.input(zp_index, "y_zero_point"), {}) : nullptr;
  DType to = zp ? ir::dtype_of(zp) : DType::u8;
  return quantize(c, c.op(OpCode::Mul, {c.cast(acc, DType::f32), multiplier}), NodeContext::scalar(DType::f32, 1), zp, to);
}

// MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32.
Outs convert_matmul_integer(NodeContext& c) {
  ir::Expr a = c.input(0, "A"), b = c.input(1, "B");
  int64_t ra = c.rank(0, "A"), rb = c.rank(1, "B");
  ir::Expr ac = centered(c, a, 2, "a_zero_point", ra - 2, DType::i32);
  ir::Expr bc = centered(c, b, 3, "b_zero_point", rb - 1, DType::i32);
  return {c.op(OpCode::MatMul, {ac, bc})};
}

Outs convert_qlinear_matmul(NodeContext& c) {
  ir::Expr a = c.input(0, "a"), b = c.input(3, "b");
  int64_t ra = c.rank(0, "a"), rb = c.rank(3, "b");
  ir::Expr acc = c.op(OpCode::MatMul, {centered(c, a, 2, "a_zero_point", ra - 2, DType::i32),
                                       centered(c, b, 5, "b_zero_point", rb - 1, DType::i32)});
  int64_t ry = static_cast<int64_t>(ir::shape_of(acc).size());
  return {requantize(c, acc, requant_scale(c, 1, ry - 2, 4, ry - 1, 6, ry), 7)};
}

// Integer convolutions run as float64 convolutions of the centred values: products and sums of
// 8-bit values stay exact in float64.
Outs convert_conv_integer(NodeContext& c) {
  ir::Expr x = centered(c, c.input(0, "x"), 2, "x_zero_point", 1, DType::f64);
  ir::Expr w = centered(c, c.input(1, "w"), 3, "w_zero_point", 0, DType::f64);
  return {c.cast(build_conv(c, x, w, nullptr), DType::i32)};
}

Outs convert_qlinear_conv(NodeContext& c) {
  ir::Expr x = centered(c, c.input(0, "x"), 2, "x_zero_point", 1, DType::f64);
  ir::Expr w = centered(c, c.input(3, "w"), 5, "w_zero_point", 0, DType::f64);
  ir::Expr bias = c.has_input(8) ? c.cast(c.input(8, "B"), DType::f64) : nullptr;
  ir::Expr acc = build_conv(c, x, w, bias);
  int64_t ry = static_cast<int64_t>(ir::shape_of(acc).size());
  return {requantize(c, acc, requant_scale(c, 1, -1, 4, 1, 6, ry), 7)};
}

}  // namespace

void register_quantize_converters(ConverterTable& t) {
  t.add("MatMulInteger", 10, convert_matmul_integer);
  t.add("ConvInteger", 10, convert_conv_integer);
  t.add("QLinearMatMul", 10, convert_qlinear_matmul);
  t.add("QLinearConv", 10, convert_qlinear_conv);
  t.add("QuantizeLinear", 10, convert_quantize);
  t.add("DequantizeLinear", 10, convert_dequantize);
  t.add("DynamicQuantizeLinear", 11, convert_dynamic_quantize);
}

}  // namespace sy::onnx
