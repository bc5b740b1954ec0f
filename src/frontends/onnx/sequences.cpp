// ONNX sequence ops on sequences known when importing (control_flow.h): a sequence is a list of
// the graph's values, so building one costs nothing at run time and ConcatFromSequence is one
// concatenation. Positions must be constants; an empty sequence has no element type to concatenate.
#include <algorithm>
#include <set>
#include <vector>

#include "frontends/onnx/control_flow.h"
#include "frontends/onnx/node_context.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::onnx {

namespace {

const std::set<std::string>& sequence_ops() {
  static const std::set<std::string> ops = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert",     "SequenceAt",
                                            "SequenceErase", "SequenceLength",    "ConcatFromSequence", "SplitToSequence"};
  return ops;
}

}  // namespace

bool is_sequence_op(const std::string& op_type) { return sequence_ops().count(op_type) != 0; }

void convert_sequence_op(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset) {
  const std::string& op = n.op_type();
  auto input_name = [&](int k) -> const std::string& {
    static const std::string none;
    return k < n.input_size() ? n.input(k) : none;
  };
  auto seq_in = [&](int k) -> std::vector<ir::Expr> {
    const auto* s = input_name(k).empty() ? nullptr : scope.sequence(input_name(k));
    if (!s) throw Error(label + ": input '" + input_name(k) + "' is not a sequence known when importing");
    return *s;
  };
  auto tensor_in = [&](int k) -> ir::Expr {
    ir::Expr v = input_name(k).empty() ? nullptr : scope.lookup(input_name(k));
    if (!v) throw Error(label + ": input '" + input_name(k) + "' refers to an unknown tensor");
    return v;
  };
  // A position input: a constant integer scalar in [-size, size) (or [-size, size] to insert).
  auto position = [&](int k, int64_t size, bool insert) -> std::optional<int64_t> {
    if (input_name(k).empty()) return std::nullopt;
    const auto* c = tensor_in(k)->as<ir::ConstantNode>();
    if (!c || c->value.numel() != 1 || !is_integer(c->value.dtype()))
      throw Error(label + ": unsupported " + op + ": its position '" + input_name(k) +
                  "' is not a constant (only positions known when importing are supported)");
    int64_t p = c->value.get_as_int(0);
    const int64_t hi = insert ? size : size - 1;
    if (p < -size || p > hi)
      throw Error(label + ": position " + std::to_string(p) + " is out of range for a sequence of " + std::to_string(size));
    return p < 0 ? p + size : p;
  };
  const std::string out = n.output_size() > 0 ? n.output(0) : "";
  if (out.empty()) return;
  const NodeContext ctx = context_of(scope, n, label, opset);

  if (op == "SequenceEmpty") return scope.bind_sequence(out, {});
  if (op == "SequenceConstruct") {
    std::vector<ir::Expr> items;
    for (int k = 0; k < n.input_size(); ++k) items.push_back(tensor_in(k));
    return scope.bind_sequence(out, items);
  }
  if (op == "SequenceInsert") {
    std::vector<ir::Expr> items = seq_in(0);
    const int64_t size = static_cast<int64_t>(items.size());
    const int64_t at = position(2, size, true).value_or(size);
    items.insert(items.begin() + at, tensor_in(1));
    return scope.bind_sequence(out, items);
  }
  if (op == "SequenceErase") {
    std::vector<ir::Expr> items = seq_in(0);
    const int64_t size = static_cast<int64_t>(items.size());
    if (size == 0) throw Error(label + ": SequenceErase of an empty sequence");
    items.erase(items.begin() + position(1, size, false).value_or(size - 1));
    return scope.bind_sequence(out, items);
  }
  if (op == "SequenceAt") {
    const std::vector<ir::Expr> items = seq_in(0);
    const auto at = position(1, static_cast<int64_t>(items.size()), false);
    if (!at) throw Error(label + ": SequenceAt needs a position");
    return scope.bind(out, items[static_cast<size_t>(*at)]);
  }
  if (op == "SequenceLength")
    return scope.bind(out, ir::constant(Tensor::from_vector<int64_t>({}, {static_cast<int64_t>(seq_in(0).size())})));
  if (op == "ConcatFromSequence") {
    const std::vector<ir::Expr> items = seq_in(0);
    if (items.empty()) throw Error(label + ": unsupported ConcatFromSequence of an empty sequence (its shape is unknown)");
    const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
    const int64_t rank = static_cast<int64_t>(ir::shape_of(items[0]).size()) + (new_axis ? 1 : 0);
    ops::AxisAttrs a;
    a.axis = ctx.axis(ctx.attr_int("axis"), rank);
    if (new_axis) return scope.bind(out, stack(ctx, items, a.axis));
    return scope.bind(out, items.size() == 1 ? items[0] : ctx.op(ops::OpCode::Concat, items, a));
  }
  // SplitToSequence: chunks of `split` (a scalar: that size, the last smaller; a list: those
  // sizes) or of 1 along axis, the axis dropped from 1-chunks where keepdims is 0.
  const ir::Expr x = tensor_in(0);
  const Shape xs = ir::shape_of(x);
  const int64_t axis = ctx.axis(ctx.attr_int("axis", 0), static_cast<int64_t>(xs.size()));
  const int64_t dim = xs[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!input_name(1).empty()) {
    const auto* c = tensor_in(1)->as<ir::ConstantNode>();
    if (!c || !is_integer(c->value.dtype()))
      throw Error(label + ": unsupported SplitToSequence: its split '" + input_name(1) + "' is not a constant");
    if (c->value.ndim() == 0) {
      const int64_t chunk = c->value.get_as_int(0);
      if (chunk <= 0) throw Error(label + ": split " + std::to_string(chunk) + " must be positive");
      for (int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
    } else {
      sizes = c->value.to_int_vector();
    }
  } else {
    sizes.assign(static_cast<size_t>(dim), 1);
    squeeze = ctx.attr_int("keepdims", 1) == 0;
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw Error(label + ": split sizes must not be negative");
    total += s;
  }
  if (total != dim) throw Error(label + ": split sizes sum to " + std::to_string(total) + ", the axis has " + std::to_string(dim));
  std::vector<ir::Expr> items;
  int64_t begin = 0;
  for (int64_t s : sizes) {
    ops::StridedSliceAttrs a;
    a.begin.assign(xs.size(), 0);
    a.end = xs;
    a.strides.assign(xs.size(), 1);
    a.begin[static_cast<size_t>(axis)] = begin;
    a.end[static_cast<size_t>(axis)] = begin + s;
    ir::Expr part = ctx.op(ops::OpCode::StridedSlice, {x}, a);
    if (squeeze) {
      Shape ps = xs;
      ps.erase(ps.begin() + axis);
      part = ctx.reshape(part, ps);
    }
    items.push_back(part);
    begin += s;
  }
  scope.bind_sequence(out, items);
}

}  // namespace sy::onnx
