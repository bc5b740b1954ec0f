// Converters of elementwise ONNX ops: unary math and activations, binary arithmetic and
// comparisons, variadic Sum/Max/Min/Mean, Clip, Cast, Where, Dropout (inference), Shrink.
#include <cmath>
#include <limits>

#include "frontends/onnx/converters.h"
#include "frontends/onnx/tensor_proto.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;

template <OpCode Code>
Outs unary(NodeContext& c) {
  return {c.op(Code, {c.input(0, "X")})};
}

template <OpCode Code>
Outs binary(NodeContext& c) {
  return {c.op(Code, {c.input(0, "A"), c.input(1, "B")})};
}

Outs identity(NodeContext& c) { return {c.input(0, "input")}; }

// An activation with one float attribute mapped onto AlphaAttrs.
template <OpCode Code, int DefaultMilli>
Outs alpha_activation(NodeContext& c) {
  ops::AlphaAttrs a;
  a.alpha = c.attr_float("alpha", DefaultMilli / 1000.0);
  return {c.op(Code, {c.input(0, "X")}, a)};
}

Outs convert_selu(NodeContext& c) {
  ops::SeluAttrs a;
  a.alpha = c.attr_float("alpha", a.alpha);
  a.gamma = c.attr_float("gamma", a.gamma);
  return {c.op(OpCode::Selu, {c.input(0, "X")}, a)};
}

Outs convert_hard_sigmoid(NodeContext& c) {
  ops::HardSigmoidAttrs a;
  a.alpha = c.attr_float("alpha", 0.2);
  a.beta = c.attr_float("beta", 0.5);
  return {c.op(OpCode::HardSigmoid, {c.input(0, "X")}, a)};
}

Outs convert_is_inf(NodeContext& c) {
  ops::IsInfAttrs a;
  a.detect_positive = c.attr_int("detect_positive", 1) != 0;
  a.detect_negative = c.attr_int("detect_negative", 1) != 0;
  return {c.op(OpCode::IsInf, {c.input(0, "X")}, a)};
}

Outs convert_mod(NodeContext& c) {
  ops::ModAttrs a;
  a.fmod = c.attr_int("fmod", 0) != 0;
  if (!a.fmod && is_float(c.dtype(0, "A")))
    c.fail("fmod=0 is only defined for integer inputs (ONNX requires fmod=1 for floating point)");
  return {c.op(OpCode::Mod, {c.input(0, "A"), c.input(1, "B")}, a)};
}

// Clip-6 holds min/max as attributes; Clip-11+ as optional scalar inputs.
Outs convert_clip(NodeContext& c) {
  ops::ClipAttrs a;
  if (c.opset() < 11) {
    a.min = c.attr_float("min", -std::numeric_limits<double>::infinity());
    a.max = c.attr_float("max", std::numeric_limits<double>::infinity());
  } else {
    auto bound = [&](size_t i, const char* role, double def) {
      auto t = c.optional_const_input(i, role);
      if (!t) return def;
      if (t->numel() != 1) c.fail(std::string("input '") + role + "' must be a scalar, got shape " + shape_str(t->shape()));
      return t->get_as_double(0);
    };
    a.min = bound(1, "min", -std::numeric_limits<double>::infinity());
    a.max = bound(2, "max", std::numeric_limits<double>::infinity());
  }
  return {c.op(OpCode::Clip, {c.input(0, "input")}, a)};
}

DType cast_target(NodeContext& c, int64_t onnx_type) {
  auto dt = dtype_from_onnx(static_cast<int32_t>(onnx_type));
  if (!dt) c.unsupported("dtype " + onnx_dtype_name(static_cast<int32_t>(onnx_type)) + " (Cast target)");
  return *dt;
}

Outs convert_cast(NodeContext& c) {
  DType to = cast_target(c, c.attr_int("to"));
  ir::Expr x = c.input(0, "input");
  ops::CastAttrs a;
  a.to = to;
  return {c.op(OpCode::Cast, {x}, a)};
}

Outs convert_cast_like(NodeContext& c) {
  ops::CastAttrs a;
  a.to = c.dtype(1, "target_type");
  return {c.op(OpCode::Cast, {c.input(0, "input")}, a)};
}

// Sum/Max/Min/Mean over any number of inputs with multidirectional broadcasting.
template <OpCode Code>
Outs variadic(NodeContext& c) {
  std::vector<ir::Expr> xs = c.variadic_inputs(1);
  ir::Expr acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) acc = c.op(Code, {acc, xs[i]});
  return {acc};
}

Outs convert_mean(NodeContext& c) {
  size_t n = c.variadic_inputs(1).size();
  ir::Expr sum = variadic<OpCode::Add>(c)[0];
  if (n == 1) return {sum};
  return {c.op(OpCode::Div, {sum, NodeContext::scalar(ir::dtype_of(sum), static_cast<double>(n))})};
}

Outs convert_where(NodeContext& c) {
  return {c.op(OpCode::Where, {c.input(0, "condition"), c.input(1, "X"), c.input(2, "Y")})};
}

// Shrink: x < -lambd ? x + bias : (x > lambd ? x - bias : 0).
Outs convert_shrink(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  DType dt = ir::dtype_of(x);
  double lambd = c.attr_float("lambd", 0.5), bias = c.attr_float("bias", 0.0);
  ir::Expr lo = c.op(OpCode::Less, {x, NodeContext::scalar(dt, -lambd)});
  ir::Expr hi = c.op(OpCode::Greater, {x, NodeContext::scalar(dt, lambd)});
  ir::Expr bias_c = NodeContext::scalar(dt, bias);
  ir::Expr inner = c.op(OpCode::Where, {hi, c.op(OpCode::Sub, {x, bias_c}), NodeContext::scalar(dt, 0)});
  return {c.op(OpCode::Where, {lo, c.op(OpCode::Add, {x, bias_c}), inner})};
}

// Dropout at inference is the identity; its mask is all ones (kept).
Outs convert_dropout(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  if (c.opset() >= 12) {
    auto training = c.optional_const_input(2, "training_mode");
    if (training && training->numel() == 1 && training->get_as_double(0) != 0) {
      auto ratio = c.optional_const_input(1, "ratio");
      double r = ratio && ratio->numel() == 1 ? ratio->get_as_double(0) : 0.5;
      if (r != 0) c.unsupported("Dropout in training mode (random masks)");
    }
  }
  Outs outs{x};
  if (c.num_outputs() > 1 && c.output_used(1)) {
    // Dropout-7/9: mask of the input's type; Dropout-10+: bool.
    DType mdt = c.opset() >= 10 ? DType::boolean : ir::dtype_of(x);
    Tensor ones(mdt, ir::shape_of(x));
    dispatch_dtype(mdt, [&](auto tag) {
      using T = decltype(tag);
      T* p = ones.data<T>();
      for (int64_t i = 0; i < ones.numel(); ++i) p[i] = static_cast<T>(1);
    });
    outs.push_back(ir::constant(std::move(ones)));
  }
  return outs;
}

}  // namespace

// Ops whose form changed at opset 7 (legacy broadcast/axis and is_test attributes) are registered
// from 7 on, so that an older model using them is reported as unsupported rather than misread.
void register_elementwise_converters(ConverterTable& t) {
  t.add("Neg", 1, unary<OpCode::Neg>);
  t.add("Abs", 1, unary<OpCode::Abs>);
  t.add("Exp", 1, unary<OpCode::Exp>);
  t.add("Log", 1, unary<OpCode::Log>);
  t.add("Sqrt", 1, unary<OpCode::Sqrt>);
  t.add("Reciprocal", 1, unary<OpCode::Reciprocal>);
  t.add("Sin", 7, unary<OpCode::Sin>);
  t.add("Cos", 7, unary<OpCode::Cos>);
  t.add("Tan", 7, unary<OpCode::Tan>);
  t.add("Asin", 7, unary<OpCode::Asin>);
  t.add("Acos", 7, unary<OpCode::Acos>);
  t.add("Atan", 7, unary<OpCode::Atan>);
  t.add("Sinh", 9, unary<OpCode::Sinh>);
  t.add("Cosh", 9, unary<OpCode::Cosh>);
  t.add("Asinh", 9, unary<OpCode::Asinh>);
  t.add("Acosh", 9, unary<OpCode::Acosh>);
  t.add("Atanh", 9, unary<OpCode::Atanh>);
  t.add("Tanh", 1, unary<OpCode::Tanh>);
  t.add("Sigmoid", 1, unary<OpCode::Sigmoid>);
  t.add("Relu", 1, unary<OpCode::Relu>);
  t.add("Erf", 9, unary<OpCode::Erf>);
  t.add("Floor", 1, unary<OpCode::Floor>);
  t.add("Ceil", 1, unary<OpCode::Ceil>);
  t.add("Round", 11, unary<OpCode::Round>);
  t.add("Sign", 9, unary<OpCode::Sign>);
  t.add("Not", 1, unary<OpCode::LogicalNot>);
  t.add("IsNaN", 9, unary<OpCode::IsNaN>);
  t.add("IsInf", 10, convert_is_inf);
  t.add("Identity", 1, identity);
  t.add("Softplus", 1, unary<OpCode::Softplus>);
  t.add("Softsign", 1, unary<OpCode::Softsign>);
  t.add("HardSwish", 14, unary<OpCode::HardSwish>);
  t.add("Mish", 18, unary<OpCode::Mish>);
  t.add("HardSigmoid", 1, convert_hard_sigmoid);
  t.add("LeakyRelu", 1, alpha_activation<OpCode::LeakyRelu, 10>);
  t.add("Elu", 1, alpha_activation<OpCode::Elu, 1000>);
  t.add("Celu", 12, alpha_activation<OpCode::Celu, 1000>);
  t.add("ThresholdedRelu", 10, alpha_activation<OpCode::ThresholdedRelu, 1000>);
  t.add("Selu", 1, convert_selu);
  t.add("Clip", 1, convert_clip);
  t.add("Cast", 1, convert_cast);
  t.add("CastLike", 15, convert_cast_like);
  t.add("Dropout", 7, convert_dropout);
  t.add("Shrink", 9, convert_shrink);

  t.add("Add", 7, binary<OpCode::Add>);
  t.add("Sub", 7, binary<OpCode::Sub>);
  t.add("Mul", 7, binary<OpCode::Mul>);
  t.add("Div", 7, binary<OpCode::Div>);
  t.add("Pow", 7, binary<OpCode::Pow>);
  t.add("Mod", 10, convert_mod);
  t.add("PRelu", 7, binary<OpCode::PRelu>);
  t.add("Equal", 7, binary<OpCode::Equal>);
  t.add("Less", 7, binary<OpCode::Less>);
  t.add("LessOrEqual", 12, binary<OpCode::LessEqual>);
  t.add("Greater", 7, binary<OpCode::Greater>);
  t.add("GreaterOrEqual", 12, binary<OpCode::GreaterEqual>);
  t.add("And", 7, binary<OpCode::LogicalAnd>);
  t.add("Or", 7, binary<OpCode::LogicalOr>);
  t.add("Xor", 7, binary<OpCode::LogicalXor>);
  t.add("Where", 9, convert_where);
  t.add("Sum", 1, variadic<OpCode::Add>);
  t.add("Max", 1, variadic<OpCode::Maximum>);
  t.add("Min", 1, variadic<OpCode::Minimum>);
  t.add("Mean", 1, convert_mean);
}

}  // namespace sy::onnx
