// Support checks and eltwise mapping of the oneDNN backend.
#include "backends/onednn/onednn_ops.h"

#include <cfloat>
#include <cmath>
#include <sstream>

#include "backends/onednn/onednn_plan.h"
#include "ops/attrs.h"
#include "ops/op.h"

namespace sy::backends::onednn {

using ops::OpCode;

std::string short_name(OpCode op) {
  std::string n = ops::op_name(op);
  auto dot = n.find('.');
  return dot == std::string::npos ? n : n.substr(dot + 1);
}

namespace {

template <typename... T>
std::string why(OpCode op, const T&... parts) {
  std::ostringstream os;
  os << "onednn " << short_name(op) << ": ";
  (os << ... << parts);
  return os.str();
}

float clamp_bound(double v) {
  if (std::isinf(v)) return v > 0 ? FLT_MAX : -FLT_MAX;
  return static_cast<float>(v);
}

// Every argument and the result are float32 tensors with at least one element.
std::string check_tensors(const ir::CallNode& c) {
  auto check = [&](const ir::Type& t, const std::string& what) -> std::string {
    if (!ir::is_tensor(t)) return why(c.op, what, " is a tuple, not a tensor");
    const ir::TypeNode& tt = ir::as_tensor(t);
    if (tt.dtype != DType::f32)
      return why(c.op, "dtype ", dtype_name(tt.dtype), " not supported (", what, "; float32 only)");
    if (shape_numel(tt.shape) == 0) return why(c.op, what, " is empty ", shape_str(tt.shape));
    if (tt.shape.size() > 12) return why(c.op, what, " has rank ", tt.shape.size(), " (at most 12)");
    return "";
  };
  for (size_t i = 0; i < c.args.size(); ++i) {
    std::string r = check(c.args[i]->type, "argument " + std::to_string(i));
    if (!r.empty()) return r;
  }
  return check(c.type, "result");
}

bool is_const(const ir::Expr& e) { return e->kind == ir::ExprKind::Constant; }

std::string check_pool(const ir::CallNode& c) {
  const auto& a = c.attrs_as<ops::Pool2dAttrs>();
  const Shape& x = ir::shape_of(c.args[0]);
  const Shape& y = c.type->shape;
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x[2 + d], out = y[2 + d];
    const int64_t k_eff = (a.kernel[d] - 1) * a.dilation[d] + 1;
    const int64_t pb = a.padding[d], pe = a.padding[2 + d];
    const int64_t pe_needed = std::max<int64_t>(0, (out - 1) * a.strides[d] + k_eff - in - pb);
    if (pb >= k_eff || pe >= k_eff)
      return why(c.op, "padding ", std::max(pb, pe), " not smaller than the kernel extent ", k_eff);
    // A window with no tap inside the input (padding and dilation holes only): oneDNN's max is
    // -FLT_MAX there, the reference's -inf.
    for (int64_t o = 0; o < out; ++o) {
      bool hits = false;
      for (int64_t t = 0; t < a.kernel[d] && !hits; ++t) {
        const int64_t pos = o * a.strides[d] - pb + t * a.dilation[d];
        hits = pos >= 0 && pos < in;
      }
      if (!hits) return why(c.op, "output ", o, " of axis ", 2 + d, " has a window with no input element");
    }
    if (c.op == OpCode::AvgPool2d && a.count_include_pad && pe_needed > pe)
      return why(c.op, "ceil_mode with count_include_pad extends the window past the declared padding "
                       "(oneDNN would count the extra positions)");
  }
  return "";
}

// A broadcast whose primitive would be oneDNN's reference loop (in some layout the value can have)
// is declined: the native kernel is 10-100x faster than that loop.
std::string with_kernel(const ir::CallNode& c, const Shape& out, const Shape& b) {
  std::string r = broadcast_binary_reference(c.op, out, b);
  return r.empty() ? r : why(c.op, r);
}

std::string check_binary(const ir::CallNode& c) {
  const Shape& out = c.type->shape;
  const Shape& a = ir::shape_of(c.args[0]);
  const Shape& b = ir::shape_of(c.args[1]);
  if (a == out) return b == out ? "" : with_kernel(c, out, b);
  const bool commutative = c.op == OpCode::Add || c.op == OpCode::Mul || c.op == OpCode::Maximum ||
                           c.op == OpCode::Minimum;
  if (b == out && commutative) return with_kernel(c, out, a);
  if (b == out)
    return why(c.op, "the first operand ", shape_str(a), " broadcasts to ", shape_str(out),
               "; oneDNN broadcasts only the second operand");
  return why(c.op, "both operands ", shape_str(a), " and ", shape_str(b), " broadcast to ", shape_str(out),
             "; oneDNN needs one operand of the result's shape");
}

}  // namespace

bool scalar_constant(const ir::Expr& e, float* value) {
  auto* c = e->as<ir::ConstantNode>();
  if (!c || c->value.numel() != 1 || c->value.dtype() != DType::f32) return false;
  *value = c->value.data<float>()[0];
  return true;
}

std::optional<std::vector<EltStep>> eltwise_steps(const ir::CallNode& c) {
  if (!c.is_op()) return std::nullopt;
  using E = EltAlg;
  switch (c.op) {
    case OpCode::Relu: return std::vector<EltStep>{{E::Relu, 0.f, 0.f}};
    case OpCode::LeakyRelu:
      return std::vector<EltStep>{{E::Relu, static_cast<float>(c.attrs_as<ops::AlphaAttrs>().alpha), 0.f}};
    case OpCode::Elu:
      return std::vector<EltStep>{{E::Elu, static_cast<float>(c.attrs_as<ops::AlphaAttrs>().alpha), 0.f}};
    case OpCode::Selu: {
      const auto& a = c.attrs_as<ops::SeluAttrs>();
      return std::vector<EltStep>{{E::Elu, static_cast<float>(a.alpha), 0.f},
                                  {E::Linear, static_cast<float>(a.gamma), 0.f}};
    }
    case OpCode::Tanh: return std::vector<EltStep>{{E::Tanh}};
    case OpCode::Sigmoid: return std::vector<EltStep>{{E::Logistic}};
    case OpCode::Exp: return std::vector<EltStep>{{E::Exp}};
    case OpCode::Log: return std::vector<EltStep>{{E::Log}};
    case OpCode::Sqrt: return std::vector<EltStep>{{E::Sqrt}};
    case OpCode::Abs: return std::vector<EltStep>{{E::Abs}};
    case OpCode::Neg: return std::vector<EltStep>{{E::Linear, -1.f, 0.f}};
    case OpCode::Reciprocal: return std::vector<EltStep>{{E::Pow, 1.f, -1.f}};
    case OpCode::Round: return std::vector<EltStep>{{E::Round}};
    case OpCode::Softplus: return std::vector<EltStep>{{E::SoftRelu}};
    case OpCode::Mish: return std::vector<EltStep>{{E::Mish}};
    case OpCode::HardSwish: return std::vector<EltStep>{{E::HardSwish}};
    case OpCode::HardSigmoid: {
      const auto& a = c.attrs_as<ops::HardSigmoidAttrs>();
      return std::vector<EltStep>{{E::Linear, static_cast<float>(a.alpha), static_cast<float>(a.beta)},
                                  {E::Clip, 0.f, 1.f}};
    }
    case OpCode::Gelu: {
      const auto& a = c.attrs_as<ops::GeluAttrs>();
      if (a.approximate == "none") return std::vector<EltStep>{{E::GeluErf}};
      if (a.approximate == "tanh") return std::vector<EltStep>{{E::GeluTanh}};
      return std::nullopt;
    }
    case OpCode::Clip: {
      const auto& a = c.attrs_as<ops::ClipAttrs>();
      if (std::isnan(a.min) || std::isnan(a.max) || a.min > a.max) return std::nullopt;
      if (a.min == 0.0 && std::isinf(a.max) && a.max > 0) return std::vector<EltStep>{{E::Relu, 0.f, 0.f}};
      return std::vector<EltStep>{{E::Clip, clamp_bound(a.min), clamp_bound(a.max)}};
    }
    default: return std::nullopt;
  }
}

bool is_binary_op(OpCode op) {
  switch (op) {
    case OpCode::Add: case OpCode::Sub: case OpCode::Mul: case OpCode::Div: case OpCode::Maximum:
    case OpCode::Minimum:
      return true;
    default: return false;
  }
}

bool is_activation_op(OpCode op) {
  switch (op) {
    case OpCode::Relu: case OpCode::LeakyRelu: case OpCode::Elu: case OpCode::Selu: case OpCode::Tanh:
    case OpCode::Sigmoid: case OpCode::Softplus: case OpCode::Mish: case OpCode::HardSwish:
    case OpCode::HardSigmoid: case OpCode::Gelu: case OpCode::Clip:
      return true;
    default: return false;
  }
}

std::string check_op(const ir::CallNode& c) {
  if (!c.is_op()) return "onednn: not an op call";
  const OpCode op = c.op;
  if (is_binary_op(op)) {
    if (auto r = check_tensors(c); !r.empty()) return r;
    return check_binary(c);
  }
  if (auto steps = eltwise_steps(c)) return check_tensors(c);
  switch (op) {
    case OpCode::Conv2d: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      const auto& a = c.attrs_as<ops::Conv2dAttrs>();
      const Shape& x = ir::shape_of(c.args[0]);
      const Shape& w = ir::shape_of(c.args[1]);
      if (a.groups < 1 || x[1] % a.groups != 0)
        return why(op, "groups=", a.groups, " with ", x[1], " input channels");
      if (w[0] % a.groups != 0) return why(op, "groups=", a.groups, " with ", w[0], " output channels");
      return "";
    }
    case OpCode::Dense: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      if (ir::shape_of(c.args[0]).size() < 2)
        return why(op, "input of rank ", ir::shape_of(c.args[0]).size(), " (at least 2)");
      return "";
    }
    case OpCode::MatMul: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      if (ir::shape_of(c.args[0]).size() < 2 || ir::shape_of(c.args[1]).size() < 2)
        return why(op, "1-D operands (vector products) are not supported");
      return "";
    }
    case OpCode::BatchNorm: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      const size_t rank = ir::shape_of(c.args[0]).size();
      if (rank < 2 || rank > 5) return why(op, "input of rank ", rank, " (2 to 5)");
      for (size_t i = 1; i < 5; ++i)
        if (!is_const(c.args[i]))
          return why(op, "scale, bias, mean and variance must be constants (argument ", i, " is not)");
      return "";
    }
    case OpCode::LayerNorm: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      for (size_t i = 1; i < c.args.size(); ++i)
        if (!is_const(c.args[i])) return why(op, "scale and bias must be constants (argument ", i, " is not)");
      return "";
    }
    case OpCode::Softmax: case OpCode::LogSoftmax: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      // Over one element the answer is exactly 1 (0 for log): oneDNN's exp/log give ~1e-6 off,
      // which a following sqrt or division turns into a visible error.
      const Shape& xs = ir::shape_of(c.args[0]);
      int64_t axis = c.attrs_as<ops::AxisAttrs>().axis;
      if (axis < 0) axis += static_cast<int64_t>(xs.size());
      if (axis >= 0 && axis < static_cast<int64_t>(xs.size()) && xs[static_cast<size_t>(axis)] == 1)
        return why(op, "the axis has extent 1 (the result is a constant)");
      return "";
    }
    case OpCode::MaxPool2d: case OpCode::AvgPool2d: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      return check_pool(c);
    }
    case OpCode::LpPool2d:
      return why(op, "Lp pooling has no oneDNN primitive");
    case OpCode::GlobalAvgPool2d: case OpCode::GlobalMaxPool2d:
      return check_tensors(c);
    case OpCode::Concat: case OpCode::Reshape: case OpCode::Transpose: case OpCode::Identity:
      return check_tensors(c);
    case OpCode::Cast: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      return "";  // float32 to float32: a copy
    }
    case OpCode::ReduceSum: case OpCode::ReduceMean: case OpCode::ReduceMax: case OpCode::ReduceMin:
    case OpCode::ReduceProd: case OpCode::ReduceL1: case OpCode::ReduceL2: case OpCode::ReduceSumSquare: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      // oneDNN has no reduction whose source and destination have the same dims (it refuses to
      // create the descriptor), which is what reducing only extent-1 axes gives.
      const Shape& xs = ir::shape_of(c.args[0]);
      const auto& axes = c.attrs_as<ops::ReduceAttrs>().axes;
      bool reduces = false;
      for (int64_t ax : axes) reduces |= xs[static_cast<size_t>(ax)] != 1;
      if (!axes.empty() && !reduces) return why(op, "every reduced axis has extent 1 (oneDNN has no such reduction)");
      return "";
    }
    case OpCode::Pow: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      float p;
      if (!scalar_constant(c.args[1], &p)) return why(op, "the exponent must be a scalar constant");
      if (ir::shape_of(c.args[0]) != c.type->shape) return why(op, "the exponent broadcasts the base");
      return "";
    }
    case OpCode::StridedSlice: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      for (int64_t st : c.attrs_as<ops::StridedSliceAttrs>().strides)
        if (st <= 0) return why(op, "negative steps are not supported");
      return "";
    }
    case OpCode::Erf:
      return why(op, "no oneDNN primitive for erf alone (GELU written with erf is taken as onednn.gelu_erf)");
    case OpCode::Pad: {
      if (auto r = check_tensors(c); !r.empty()) return r;
      const auto& a = c.attrs_as<ops::PadAttrs>();
      for (int64_t p : a.pads)
        if (p != 0) return why(op, "only all-zero pads (a no-op) are supported");
      return "";
    }
    default:
      break;
  }
  if (op == OpCode::Gelu) return why(op, "unknown approximate '", c.attrs_as<ops::GeluAttrs>().approximate, "'");
  if (op == OpCode::Clip) return why(op, "bounds min > max or NaN");
  return why(op, "no oneDNN primitive for this op");
}

}  // namespace sy::backends::onednn
