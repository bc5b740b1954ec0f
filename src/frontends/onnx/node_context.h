// What an ONNX op converter sees of one node: its inputs as IR values, typed attribute access,
// constant-input access, and IR builders that fold constant calls eagerly.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ir/expr.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/tensor.h"

// The protobuf classes stay out of this header: converters compile much faster without them.
namespace onnx {
class NodeProto;
class AttributeProto;
}  // namespace onnx

namespace sy::onnx {

class NodeContext {
 public:
  // inputs: one per node input slot, nullptr for an absent optional input ("").
  // output_used(i): whether output i is consumed by a later node or is a graph output.
  NodeContext(const ::onnx::NodeProto& node, int64_t opset, std::string label, std::vector<ir::Expr> inputs,
              std::function<bool(size_t)> output_used, std::string model_dir);

  const ::onnx::NodeProto& node() const { return node_; }
  const std::string& op_type() const;
  int64_t opset() const { return opset_; }
  // "Reshape node 'r1'" (or "Reshape node #3" for an unnamed node): the prefix of every message.
  const std::string& label() const { return label_; }
  const std::string& model_dir() const { return model_dir_; }

  // ---- inputs ----
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  // A required input; `role` is its name in the ONNX schema (used in messages).
  ir::Expr input(size_t i, std::string_view role) const;
  ir::Expr optional_input(size_t i) const { return has_input(i) ? inputs_[i] : nullptr; }
  // All present inputs (for variadic ops); at least `min` of them.
  std::vector<ir::Expr> variadic_inputs(size_t min) const;
  // An input whose value must be known at import time (after folding).
  Tensor const_input(size_t i, std::string_view role) const;
  std::optional<Tensor> optional_const_input(size_t i, std::string_view role) const;
  std::vector<int64_t> const_ints(size_t i, std::string_view role) const;
  // Type facts of a required tensor input.
  const Shape& shape(size_t i, std::string_view role) const;
  int64_t rank(size_t i, std::string_view role) const { return static_cast<int64_t>(shape(i, role).size()); }
  DType dtype(size_t i, std::string_view role) const;

  // ---- attributes ----
  bool has_attr(std::string_view name) const { return find_attr(name) != nullptr; }
  int64_t attr_int(std::string_view name, std::optional<int64_t> def = std::nullopt) const;
  double attr_float(std::string_view name, std::optional<double> def = std::nullopt) const;
  std::string attr_string(std::string_view name, std::optional<std::string> def = std::nullopt) const;
  std::vector<int64_t> attr_ints(std::string_view name, std::optional<std::vector<int64_t>> def = std::nullopt) const;
  std::vector<double> attr_floats(std::string_view name) const;
  std::vector<std::string> attr_strings(std::string_view name) const;
  Tensor attr_tensor(std::string_view name) const;
  // A number given as INT or FLOAT (some attributes changed type across opsets).
  double attr_number(std::string_view name, double def) const;
  std::vector<std::string> attr_names() const;
  const ::onnx::AttributeProto* find_attr(std::string_view name) const;

  // ---- outputs ----
  size_t num_outputs() const;
  bool output_used(size_t i) const { return output_used_(i); }

  // ---- building (errors from op relations are prefixed with the node label) ----
  ir::Expr op(ops::OpCode code, std::vector<ir::Expr> args, ir::AttrsPtr attrs = nullptr) const;
  template <typename A>
    requires std::is_base_of_v<ir::Attrs, A>
  ir::Expr op(ops::OpCode code, std::vector<ir::Expr> args, A attrs) const {
    return op(code, std::move(args), ir::AttrsPtr(std::make_shared<const A>(std::move(attrs))));
  }
  ir::Expr reshape(const ir::Expr& x, Shape newshape) const;
  ir::Expr transpose(const ir::Expr& x, std::vector<int64_t> perm) const;  // no-op for the identity
  ir::Expr cast(const ir::Expr& x, DType to) const;  // no-op when already of that dtype
  ir::Expr tuple_item(const ir::Expr& tuple, int index) const;
  // A scalar (rank 0) constant of the given dtype.
  static ir::Expr scalar(DType dt, double value);
  // Normalises a possibly negative axis into [0, rank), else a clear error naming `what`.
  int64_t axis(int64_t axis, int64_t rank, std::string_view what = "axis") const;

  // ---- errors ----
  [[noreturn]] void fail(const std::string& msg) const;
  // "<label>: unsupported <what>": a variant of a supported op that Switchyard cannot express.
  [[noreturn]] void unsupported(const std::string& what) const;

 private:
  const ::onnx::AttributeProto& attr_of_type(std::string_view name, int type, const char* type_name) const;

  const ::onnx::NodeProto& node_;
  int64_t opset_;
  std::string label_;
  std::vector<ir::Expr> inputs_;
  std::function<bool(size_t)> output_used_;
  std::string model_dir_;
};

}  // namespace sy::onnx
