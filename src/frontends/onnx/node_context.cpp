// NodeContext: input/attribute access and folding builders for ONNX op converters.
#include "frontends/onnx/node_context.h"

#include "frontends/onnx/tensor_proto.h"
#include "onnx/onnx.pb.h"
#include "ops/op.h"
#include "passes/fold_constants.h"
#include "support/error.h"

namespace sy::onnx {

using ::onnx::AttributeProto;

NodeContext::NodeContext(const ::onnx::NodeProto& node, int64_t opset, std::string label,
                         std::vector<ir::Expr> inputs, std::function<bool(size_t)> output_used,
                         std::string model_dir)
    : node_(node), opset_(opset), label_(std::move(label)), inputs_(std::move(inputs)),
      output_used_(std::move(output_used)), model_dir_(std::move(model_dir)) {}

const std::string& NodeContext::op_type() const { return node_.op_type(); }

size_t NodeContext::num_outputs() const { return static_cast<size_t>(node_.output_size()); }

std::vector<std::string> NodeContext::attr_names() const {
  std::vector<std::string> v;
  for (const auto& a : node_.attribute()) v.push_back(a.name());
  return v;
}

double NodeContext::attr_number(std::string_view name, double def) const {
  const AttributeProto* a = find_attr(name);
  if (!a) return def;
  if (a->type() == AttributeProto::FLOAT) return a->f();
  return static_cast<double>(attr_int(name));
}

void NodeContext::fail(const std::string& msg) const { throw Error(label_ + ": " + msg); }

void NodeContext::unsupported(const std::string& what) const { throw Error(label_ + ": unsupported " + what); }

ir::Expr NodeContext::input(size_t i, std::string_view role) const {
  if (!has_input(i)) fail("missing required input " + std::to_string(i) + " ('" + std::string(role) + "')");
  const ir::Expr& e = inputs_[i];
  if (!ir::is_tensor(e->type)) fail("input '" + std::string(role) + "' is not a tensor");
  return e;
}

std::vector<ir::Expr> NodeContext::variadic_inputs(size_t min) const {
  std::vector<ir::Expr> out;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i]) out.push_back(input(i, "inputs"));
  if (out.size() < min) fail("needs at least " + std::to_string(min) + " inputs, got " + std::to_string(out.size()));
  return out;
}

Tensor NodeContext::const_input(size_t i, std::string_view role) const {
  ir::Expr e = input(i, role);
  auto* c = e->as<ir::ConstantNode>();
  if (!c)
    fail("input '" + std::string(role) + "' is not a constant (dynamic shapes are not supported)");
  return c->value;
}

std::optional<Tensor> NodeContext::optional_const_input(size_t i, std::string_view role) const {
  if (!has_input(i)) return std::nullopt;
  return const_input(i, role);
}

std::vector<int64_t> NodeContext::const_ints(size_t i, std::string_view role) const {
  Tensor t = const_input(i, role);
  if (!is_integer(t.dtype()))
    fail("input '" + std::string(role) + "' must be an integer tensor, got " + std::string(dtype_name(t.dtype())));
  return t.to_int_vector();
}

const Shape& NodeContext::shape(size_t i, std::string_view role) const { return ir::shape_of(input(i, role)); }

DType NodeContext::dtype(size_t i, std::string_view role) const { return ir::dtype_of(input(i, role)); }

const AttributeProto* NodeContext::find_attr(std::string_view name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const AttributeProto& NodeContext::attr_of_type(std::string_view name, int type, const char* type_name) const {
  const AttributeProto* a = find_attr(name);
  SY_CHECK(a) << "attr_of_type on a missing attribute";
  if (!a->ref_attr_name().empty()) unsupported("attribute '" + std::string(name) + "' referring to a function attribute");
  // Old exporters leave `type` unset; accept the field that is actually present then.
  if (a->type() != AttributeProto::UNDEFINED && a->type() != type)
    fail("attribute '" + std::string(name) + "' must be of type " + type_name + ", got " +
         AttributeProto::AttributeType_Name(a->type()));
  return *a;
}

int64_t NodeContext::attr_int(std::string_view name, std::optional<int64_t> def) const {
  if (!has_attr(name)) {
    if (!def) fail("missing required attribute '" + std::string(name) + "'");
    return *def;
  }
  return attr_of_type(name, AttributeProto::INT, "INT").i();
}

double NodeContext::attr_float(std::string_view name, std::optional<double> def) const {
  if (!has_attr(name)) {
    if (!def) fail("missing required attribute '" + std::string(name) + "'");
    return *def;
  }
  return attr_of_type(name, AttributeProto::FLOAT, "FLOAT").f();
}

std::string NodeContext::attr_string(std::string_view name, std::optional<std::string> def) const {
  if (!has_attr(name)) {
    if (!def) fail("missing required attribute '" + std::string(name) + "'");
    return *def;
  }
  return attr_of_type(name, AttributeProto::STRING, "STRING").s();
}

std::vector<int64_t> NodeContext::attr_ints(std::string_view name, std::optional<std::vector<int64_t>> def) const {
  if (!has_attr(name)) {
    if (!def) fail("missing required attribute '" + std::string(name) + "'");
    return *def;
  }
  const auto& a = attr_of_type(name, AttributeProto::INTS, "INTS");
  return std::vector<int64_t>(a.ints().begin(), a.ints().end());
}

std::vector<double> NodeContext::attr_floats(std::string_view name) const {
  if (!has_attr(name)) fail("missing required attribute '" + std::string(name) + "'");
  const auto& a = attr_of_type(name, AttributeProto::FLOATS, "FLOATS");
  return std::vector<double>(a.floats().begin(), a.floats().end());
}

std::vector<std::string> NodeContext::attr_strings(std::string_view name) const {
  if (!has_attr(name)) fail("missing required attribute '" + std::string(name) + "'");
  const auto& a = attr_of_type(name, AttributeProto::STRINGS, "STRINGS");
  return std::vector<std::string>(a.strings().begin(), a.strings().end());
}

Tensor NodeContext::attr_tensor(std::string_view name) const {
  if (!has_attr(name)) fail("missing required attribute '" + std::string(name) + "'");
  const auto& a = attr_of_type(name, AttributeProto::TENSOR, "TENSOR");
  return tensor_from_proto(a.t(), model_dir_, label_ + ": attribute '" + std::string(name) + "'");
}

ir::Expr NodeContext::op(ops::OpCode code, std::vector<ir::Expr> args, ir::AttrsPtr attrs) const {
  try {
    return passes::fold_node(ir::call(code, std::move(args), std::move(attrs)));
  } catch (const Error& e) {
    throw Error(label_ + ": " + e.what());
  }
}

ir::Expr NodeContext::reshape(const ir::Expr& x, Shape newshape) const {
  if (ir::shape_of(x) == newshape) return x;
  ops::ReshapeAttrs a;
  a.newshape = std::move(newshape);
  return op(ops::OpCode::Reshape, {x}, a);
}

ir::Expr NodeContext::transpose(const ir::Expr& x, std::vector<int64_t> perm) const {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  ops::TransposeAttrs a;
  a.perm = std::move(perm);
  return op(ops::OpCode::Transpose, {x}, a);
}

ir::Expr NodeContext::cast(const ir::Expr& x, DType to) const {
  if (ir::dtype_of(x) == to) return x;
  ops::CastAttrs a;
  a.to = to;
  return op(ops::OpCode::Cast, {x}, a);
}

ir::Expr NodeContext::tuple_item(const ir::Expr& t, int index) const {
  return passes::fold_node(ir::tuple_get_item(t, index));
}

ir::Expr NodeContext::scalar(DType dt, double value) {
  Tensor t(dt, {});
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    t.data<T>()[0] = static_cast<T>(value);
  });
  return ir::constant(std::move(t));
}

int64_t NodeContext::axis(int64_t axis, int64_t rank, std::string_view what) const {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

}  // namespace sy::onnx
