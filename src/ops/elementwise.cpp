// Type relations of the unary elementwise ops and the broadcasting binary/ternary ops.
#include <optional>

#include "ops/attrs.h"
#include "ops/relation_util.h"

namespace sy::ops {
namespace {

using ir::Type;

enum class In { Any, Numeric, Float, Bool };

void check_input(const std::string& op, const ir::TypeNode& t, const char* what, In in) {
  switch (in) {
    case In::Any: break;
    case In::Numeric: check_numeric(op, t, what); break;
    case In::Float: check_float(op, t, what); break;
    case In::Bool: check_bool(op, t, what); break;
  }
}

// Same shape as the input; dtype kept, or `out` if given.
void unary(OpRegistry& r, OpCode code, In in, std::optional<DType> out = std::nullopt) {
  define_op(r, code, 1, 1, [in, out](const std::string& op, const TypeList& args, const ir::Attrs&) {
    const auto& x = tensor_arg(op, args, 0, "x");
    check_input(op, x, "x", in);
    return ir::tensor_type(x.shape, out ? *out : x.dtype);
  });
}

// Numpy broadcasting of two operands of the same dtype.
void binary(OpRegistry& r, OpCode code, In in, std::optional<DType> out = std::nullopt) {
  define_op(r, code, 2, 2, [in, out](const std::string& op, const TypeList& args, const ir::Attrs&) {
    const auto& a = tensor_arg(op, args, 0, "lhs");
    const auto& b = tensor_arg(op, args, 1, "rhs");
    check_same_dtype(op, a, "lhs", b, "rhs");
    check_input(op, a, "lhs", in);
    Shape s = broadcast_shapes(op, a.shape, "lhs", b.shape, "rhs");
    return ir::tensor_type(std::move(s), out ? *out : a.dtype);
  });
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  // Transcendental and rounding ops are defined on floats only (as in ONNX).
  for (OpCode c : {OpCode::Exp, OpCode::Log, OpCode::Sqrt, OpCode::Reciprocal, OpCode::Sin, OpCode::Cos,
                   OpCode::Tan, OpCode::Asin, OpCode::Acos, OpCode::Atan, OpCode::Sinh, OpCode::Cosh,
                   OpCode::Asinh, OpCode::Acosh, OpCode::Atanh, OpCode::Tanh, OpCode::Sigmoid, OpCode::Erf,
                   OpCode::Floor, OpCode::Ceil, OpCode::Round, OpCode::Softplus, OpCode::Softsign,
                   OpCode::Gelu, OpCode::HardSigmoid, OpCode::HardSwish, OpCode::LeakyRelu, OpCode::Elu,
                   OpCode::Celu, OpCode::Selu, OpCode::ThresholdedRelu, OpCode::Mish})
    unary(r, c, In::Float);
  for (OpCode c : {OpCode::Neg, OpCode::Abs, OpCode::Sign, OpCode::Relu}) unary(r, c, In::Numeric);
  unary(r, OpCode::Identity, In::Any);
  unary(r, OpCode::LogicalNot, In::Bool);
  unary(r, OpCode::IsNaN, In::Float, DType::boolean);
  unary(r, OpCode::IsInf, In::Float, DType::boolean);

  define_op(r, OpCode::Clip, 1, 1, [](const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
    const auto& a = attrs_as<ClipAttrs>(op, attrs);
    const auto& x = tensor_arg(op, args, 0, "x");
    check_numeric(op, x, "x");
    if (a.min > a.max) fail(op, "min=", a.min, " is greater than max=", a.max);
    return ir::tensor_type(x.shape, x.dtype);
  });
  define_op(r, OpCode::Cast, 1, 1, [](const std::string& op, const TypeList& args, const ir::Attrs& attrs) {
    const auto& a = attrs_as<CastAttrs>(op, attrs);
    const auto& x = tensor_arg(op, args, 0, "x");
    return ir::tensor_type(x.shape, a.to);
  });

  for (OpCode c : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div, OpCode::Maximum, OpCode::Minimum,
                   OpCode::Mod})
    binary(r, c, In::Numeric);
  binary(r, OpCode::Equal, In::Any, DType::boolean);
  for (OpCode c : {OpCode::Less, OpCode::LessEqual, OpCode::Greater, OpCode::GreaterEqual})
    binary(r, c, In::Numeric, DType::boolean);
  for (OpCode c : {OpCode::LogicalAnd, OpCode::LogicalOr, OpCode::LogicalXor})
    binary(r, c, In::Bool, DType::boolean);

  // The exponent may have another numeric dtype; the result has the base's.
  define_op(r, OpCode::Pow, 2, 2, [](const std::string& op, const TypeList& args, const ir::Attrs&) {
    const auto& a = tensor_arg(op, args, 0, "base");
    const auto& b = tensor_arg(op, args, 1, "exponent");
    check_numeric(op, a, "base");
    check_numeric(op, b, "exponent");
    return ir::tensor_type(broadcast_shapes(op, a.shape, "base", b.shape, "exponent"), a.dtype);
  });
  // The slope broadcasts to x (unidirectionally): the result has x's shape.
  define_op(r, OpCode::PRelu, 2, 2, [](const std::string& op, const TypeList& args, const ir::Attrs&) {
    const auto& x = tensor_arg(op, args, 0, "x");
    const auto& s = tensor_arg(op, args, 1, "slope");
    check_same_dtype(op, x, "x", s, "slope");
    check_numeric(op, x, "x");
    Shape out = broadcast_shapes(op, x.shape, "x", s.shape, "slope");
    if (out != x.shape) fail(op, "slope of shape ", shape_str(s.shape), " does not broadcast to x of shape ",
                             shape_str(x.shape));
    return ir::tensor_type(x.shape, x.dtype);
  });
  define_op(r, OpCode::Where, 3, 3, [](const std::string& op, const TypeList& args, const ir::Attrs&) {
    const auto& c = tensor_arg(op, args, 0, "cond");
    const auto& x = tensor_arg(op, args, 1, "x");
    const auto& y = tensor_arg(op, args, 2, "y");
    check_bool(op, c, "cond");
    check_same_dtype(op, x, "x", y, "y");
    Shape s = broadcast_shapes(op, c.shape, "cond", x.shape, "x");
    s = broadcast_shapes(op, s, "broadcast(cond, x)", y.shape, "y");
    return ir::tensor_type(std::move(s), x.dtype);
  });
}

}  // namespace sy::ops
