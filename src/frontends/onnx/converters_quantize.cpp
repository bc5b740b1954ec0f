// Converters of ONNX linear quantization ops (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear), composed of casts, rounding and clipping in float32.
#include "frontends/onnx/converters.h"
#include "frontends/onnx/tensor_proto.h"

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

}  // namespace

void register_quantize_converters(ConverterTable& t) {
  t.add("QuantizeLinear", 10, convert_quantize);
  t.add("DequantizeLinear", 10, convert_dequantize);
  t.add("DynamicQuantizeLinear", 11, convert_dynamic_quantize);
}

}  // namespace sy::onnx
