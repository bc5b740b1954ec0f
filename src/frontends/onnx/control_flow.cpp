// ONNX If, Loop and Scan imported in place (control_flow.h).
#include "frontends/onnx/control_flow.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "frontends/onnx/node_context.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::onnx {

namespace {

const ::onnx::GraphProto* graph_attr(const ::onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

// A scalar input whose value must be known when importing; nullopt if the input is absent.
std::optional<Tensor> known_scalar(GraphScope& scope, const ::onnx::NodeProto& n, int k, const std::string& label,
                                   const std::string& what) {
  if (n.input_size() <= k || n.input(k).empty()) return std::nullopt;
  ir::Expr e = scope.lookup(n.input(k));
  if (!e) throw Error(label + ": input '" + n.input(k) + "' refers to an unknown tensor");
  const auto* c = e->as<ir::ConstantNode>();
  if (!c)
    throw Error(label + ": unsupported " + n.op_type() + ": its " + what + " '" + n.input(k) + "' is not a constant (it is "
                "computed from the graph's inputs; only a course known when importing, e.g. from shapes, is supported)");
  if (c->value.numel() != 1) throw Error(label + ": " + n.op_type() + "'s " + what + " must have one element");
  return c->value;
}

ir::Expr output_of(GraphScope& scope, const ::onnx::GraphProto& g, int k, const std::string& label) {
  ir::Expr v = scope.lookup(g.output(k).name());
  if (!v) throw Error(label + ": '" + g.output(k).name() + "' is not produced in the " + g.name() + " graph");
  return v;
}


// Element i of x along axis, the axis removed.
ir::Expr take(const NodeContext& ctx, const ir::Expr& x, int64_t axis, int64_t i) {
  Shape s = ir::shape_of(x);
  ops::StridedSliceAttrs a;
  a.begin.assign(s.size(), 0);
  a.end = s;
  a.strides.assign(s.size(), 1);
  a.begin[static_cast<size_t>(axis)] = i;
  a.end[static_cast<size_t>(axis)] = i + 1;
  s.erase(s.begin() + axis);
  return ctx.reshape(ctx.op(ops::OpCode::StridedSlice, {x}, a), s);
}


void check_unroll(const ::onnx::GraphProto& body, int64_t steps, const std::string& label, const std::string& op) {
  if (steps > 0 && steps > kMaxUnrolledNodes / std::max(body.node_size(), 1))
    throw Error(label + ": unsupported " + op + " of " + std::to_string(steps) + " steps of " + std::to_string(body.node_size()) +
                " nodes (unrolled, over " + std::to_string(kMaxUnrolledNodes) + " nodes)");
}

}  // namespace

NodeContext context_of(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset) {
  return NodeContext(n, opset, label, {}, [](size_t) { return true; }, scope.model_dir());
}

ir::Expr stack(const NodeContext& ctx, const std::vector<ir::Expr>& values, int64_t axis) {
  std::vector<ir::Expr> parts;
  for (const ir::Expr& v : values) {
    Shape s = ir::shape_of(v);
    s.insert(s.begin() + axis, 1);
    parts.push_back(ctx.reshape(v, s));
  }
  if (parts.size() == 1) return parts[0];
  ops::AxisAttrs a;
  a.axis = axis;
  return ctx.op(ops::OpCode::Concat, parts, a);
}

// If-1/11/13/16. A condition known when importing: the branch taken imported in the If's place,
// reading the enclosing values. A condition known only at run time (TorchScript's `if x.sum() >
// 0:`): both branches imported and each output picked by Where, so both are computed (a fault in
// the branch not taken, an index out of range, is reported although the model would not meet
// it: an error, never a wrong value); their outputs must agree in shape and type.
void convert_if(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset) {
  if (n.input_size() < 1 || n.input(0).empty()) throw Error(label + ": If has no condition input");
  ir::Expr cond = scope.lookup(n.input(0));
  if (!cond) throw Error(label + ": input '" + n.input(0) + "' refers to an unknown tensor");
  if (shape_numel(ir::shape_of(cond)) != 1)
    throw Error(label + ": If's condition must have one element, got shape " + shape_str(ir::shape_of(cond)));
  auto branch_of = [&](bool then) {
    const ::onnx::GraphProto* g = graph_attr(n, then ? "then_branch" : "else_branch");
    const std::string which = then ? "then" : "else";
    if (!g) throw Error(label + ": If has no " + which + "_branch graph");
    if (g->output_size() != n.output_size())
      throw Error(label + ": the " + which + " branch has " + std::to_string(g->output_size()) + " outputs, the If " +
                  std::to_string(n.output_size()));
    scope.import_nodes(*g, opset, label + " (its " + which + " branch)");
    return g;
  };
  if (const auto* known = cond->as<ir::ConstantNode>()) {
    const ::onnx::GraphProto* branch = branch_of(known->value.get_as_double(0) != 0);
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      if (const auto* seq = scope.sequence(branch->output(k).name())) scope.bind_sequence(n.output(k), *seq);
      else scope.bind(n.output(k), output_of(scope, *branch, k, label));
    }
    return;
  }
  const ::onnx::GraphProto* then_g = branch_of(true);
  std::vector<ir::Expr> then_out;
  for (int k = 0; k < n.output_size(); ++k) {
    if (scope.sequence(then_g->output(k).name()))
      throw Error(label + ": unsupported If whose condition is known only at run time and whose branches give sequences");
    then_out.push_back(output_of(scope, *then_g, k, label));
  }
  const ::onnx::GraphProto* else_g = branch_of(false);
  const NodeContext ctx = context_of(scope, n, label, opset);
  ir::Expr pick = ir::dtype_of(cond) == DType::boolean ? cond : ctx.cast(cond, DType::boolean);
  for (int k = 0; k < n.output_size(); ++k) {
    if (scope.sequence(else_g->output(k).name()))
      throw Error(label + ": unsupported If whose condition is known only at run time and whose branches give sequences");
    ir::Expr t = then_out[static_cast<size_t>(k)], e = output_of(scope, *else_g, k, label);
    if (ir::shape_of(t) != ir::shape_of(e) || ir::dtype_of(t) != ir::dtype_of(e))
      throw Error(label + ": unsupported If whose condition is known only at run time and whose branches give output " +
                  std::to_string(k) + " as " + std::string(dtype_name(ir::dtype_of(t))) + " " + shape_str(ir::shape_of(t)) +
                  " and " + std::string(dtype_name(ir::dtype_of(e))) + " " + shape_str(ir::shape_of(e)));
    if (!n.output(k).empty()) scope.bind(n.output(k), ctx.op(ops::OpCode::Where, {pick, t, e}));
  }
}

// Loop-1/11/13/16 of a trip count and conditions known when importing: the body imported once
// per step with the step number, the condition and the carried values bound to its inputs; the
// scan outputs stacked along a new first axis.
void convert_loop(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset) {
  const std::optional<Tensor> trip = known_scalar(scope, n, 0, label, "trip count");
  const std::optional<Tensor> first_cond = known_scalar(scope, n, 1, label, "condition");
  if (!trip && !first_cond) throw Error(label + ": unsupported Loop with neither a trip count nor a condition (endless)");
  const ::onnx::GraphProto* body = graph_attr(n, "body");
  if (!body) throw Error(label + ": Loop has no body graph");
  const int carried = n.input_size() - 2;
  if (carried < 0 || body->input_size() != carried + 2 || body->output_size() < carried + 1)
    throw Error(label + ": the body's inputs and outputs do not match the Loop's " + std::to_string(std::max(carried, 0)) +
                " carried values");
  const int scans = body->output_size() - 1 - carried;
  if (n.output_size() != carried + scans)
    throw Error(label + ": Loop has " + std::to_string(n.output_size()) + " outputs, its body makes " +
                std::to_string(carried + scans));
  // A carried value is a tensor or a sequence (a list the body appends to).
  struct Carried {
    ir::Expr tensor;
    std::vector<ir::Expr> list;
    bool is_list = false;
  };
  std::vector<Carried> values;
  for (int k = 0; k < carried; ++k) {
    const std::string& name = n.input(2 + k);
    Carried v;
    if (const auto* seq = name.empty() ? nullptr : scope.sequence(name)) v.list = *seq, v.is_list = true;
    else v.tensor = name.empty() ? nullptr : scope.lookup(name);
    if (!v.is_list && !v.tensor) throw Error(label + ": carried value " + std::to_string(k) + " ('" + name + "') is unknown");
    values.push_back(v);
  }
  auto bind_carried = [&](const std::string& name, const Carried& v) {
    if (v.is_list) scope.bind_sequence(name, v.list);
    else scope.bind(name, v.tensor);
  };
  auto carried_out = [&](int k) {
    Carried v;
    if (const auto* seq = scope.sequence(body->output(k).name())) v.list = *seq, v.is_list = true;
    else v.tensor = output_of(scope, *body, k, label);
    return v;
  };
  std::vector<std::vector<ir::Expr>> scanned(static_cast<size_t>(scans));
  const int64_t steps = trip ? trip->get_as_int(0) : std::numeric_limits<int64_t>::max();
  bool cond = first_cond ? first_cond->get_as_double(0) != 0 : true;
  // Without a condition input, a Loop is a for loop: the condition its body computes is ignored
  // (ONNX), so the steps are known before the first is imported.
  const bool for_loop = n.input_size() < 2 || n.input(1).empty();
  if (for_loop) check_unroll(*body, steps, label, "Loop");
  int64_t i = 0;
  for (; i < steps && cond; ++i) {
    check_unroll(*body, i + 1, label, "Loop");
    scope.bind(body->input(0).name(), ir::constant(Tensor::from_vector<int64_t>({}, {i})));
    scope.bind(body->input(1).name(), ir::constant(Tensor::from_vector<bool>({}, {cond})));
    for (int k = 0; k < carried; ++k) bind_carried(body->input(2 + k).name(), values[static_cast<size_t>(k)]);
    scope.import_nodes(*body, opset, label + " (its body)");
    if (!for_loop) {
      const auto* c = output_of(scope, *body, 0, label)->as<ir::ConstantNode>();
      if (!c || c->value.numel() != 1)
        throw Error(label + ": unsupported Loop: the condition its body computes is not a constant (it depends on the data)");
      cond = c->value.get_as_double(0) != 0;
    }
    for (int k = 0; k < carried; ++k) values[static_cast<size_t>(k)] = carried_out(1 + k);
    for (int j = 0; j < scans; ++j) scanned[static_cast<size_t>(j)].push_back(output_of(scope, *body, 1 + carried + j, label));
  }
  for (int k = 0; k < carried; ++k)
    if (!n.output(k).empty()) bind_carried(n.output(k), values[static_cast<size_t>(k)]);
  if (scans > 0 && i == 0) throw Error(label + ": unsupported Loop of no steps with scan outputs (their shapes are unknown)");
  const NodeContext ctx = context_of(scope, n, label, opset);
  for (int j = 0; j < scans; ++j)
    if (!n.output(carried + j).empty()) scope.bind(n.output(carried + j), stack(ctx, scanned[static_cast<size_t>(j)], 0));
}

// Scan-9/11/16 (and Scan-8 without sequence_lens, its batch axis an outer loop): the body
// imported once per element of the scanned axes, the states carried; the scan outputs stacked
// along their axes, each input and output read or written backwards where its direction says.
void convert_scan(GraphScope& scope, const ::onnx::NodeProto& n, const std::string& label, int64_t opset) {
  const ::onnx::GraphProto* body = graph_attr(n, "body");
  if (!body) throw Error(label + ": Scan has no body graph");
  const NodeContext ctx = context_of(scope, n, label, opset);
  const bool v8 = opset < 9;
  const int first = v8 ? 1 : 0;  // Scan-8's sequence_lens
  if (v8 && n.input_size() > 0 && !n.input(0).empty()) throw Error(label + ": unsupported Scan-8 with sequence_lens");
  const int64_t M = ctx.attr_int("num_scan_inputs");
  const int N = n.input_size() - first - static_cast<int>(M);
  if (M < 1 || N < 0) throw Error(label + ": num_scan_inputs " + std::to_string(M) + " does not fit the Scan's inputs");
  const int K = body->output_size() - N;
  if (body->input_size() != N + M || K < 0 || n.output_size() != N + K)
    throw Error(label + ": the body's inputs and outputs do not match the Scan's " + std::to_string(N) + " states and " +
                std::to_string(M) + " scanned inputs");
  auto ints = [&](const char* name, int64_t count, int64_t def) {
    std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(static_cast<size_t>(count), def));
    if (static_cast<int64_t>(v.size()) != count) throw Error(label + ": attribute '" + name + "' needs " + std::to_string(count) + " values");
    return v;
  };
  std::vector<int64_t> in_dirs = ints(v8 ? "directions" : "scan_input_directions", M, 0);
  std::vector<int64_t> in_axes = v8 ? std::vector<int64_t>(static_cast<size_t>(M), 0) : ints("scan_input_axes", M, 0);
  std::vector<int64_t> out_dirs = v8 ? std::vector<int64_t>(static_cast<size_t>(K), 0) : ints("scan_output_directions", K, 0);
  std::vector<int64_t> out_axes = v8 ? std::vector<int64_t>(static_cast<size_t>(K), 0) : ints("scan_output_axes", K, 0);
  std::vector<ir::Expr> states, inputs;
  for (int k = 0; k < N + static_cast<int>(M); ++k) {
    const std::string& name = n.input(first + k);
    ir::Expr v = name.empty() ? nullptr : scope.lookup(name);
    if (!v) throw Error(label + ": input '" + name + "' is unknown");
    (k < N ? states : inputs).push_back(v);
  }
  // One scan of `scanned` (batch removed for Scan-8) from `init`: the final states, then each
  // scan output stacked.
  auto run = [&](std::vector<ir::Expr> st, const std::vector<ir::Expr>& scanned) {
    int64_t T = -1;
    for (size_t j = 0; j < scanned.size(); ++j) {
      const int64_t r = static_cast<int64_t>(ir::shape_of(scanned[j]).size());
      in_axes[j] = in_axes[j] < 0 ? in_axes[j] + r : in_axes[j];
      if (in_axes[j] < 0 || in_axes[j] >= r) throw Error(label + ": scan input axis out of range");
      const int64_t len = ir::shape_of(scanned[j])[static_cast<size_t>(in_axes[j])];
      if (T >= 0 && len != T) throw Error(label + ": scanned inputs of different lengths " + std::to_string(T) + " and " + std::to_string(len));
      T = len;
    }
    if (T == 0 && K > 0) throw Error(label + ": unsupported Scan of no steps with scan outputs (their shapes are unknown)");
    check_unroll(*body, T, label, "Scan");
    std::vector<std::vector<ir::Expr>> outs(static_cast<size_t>(K));
    for (int64_t t = 0; t < T; ++t) {
      for (int k = 0; k < N; ++k) scope.bind(body->input(k).name(), st[static_cast<size_t>(k)]);
      for (size_t j = 0; j < scanned.size(); ++j)
        scope.bind(body->input(N + static_cast<int>(j)).name(), take(ctx, scanned[j], in_axes[j], in_dirs[j] ? T - 1 - t : t));
      scope.import_nodes(*body, opset, label + " (its body)");
      for (int k = 0; k < N; ++k) st[static_cast<size_t>(k)] = output_of(scope, *body, k, label);
      for (int k = 0; k < K; ++k) outs[static_cast<size_t>(k)].push_back(output_of(scope, *body, N + k, label));
    }
    for (int k = 0; k < K; ++k) {
      auto& o = outs[static_cast<size_t>(k)];
      if (out_dirs[static_cast<size_t>(k)]) std::reverse(o.begin(), o.end());
      int64_t axis = out_axes[static_cast<size_t>(k)];
      const int64_t r = static_cast<int64_t>(ir::shape_of(o[0]).size()) + 1;
      axis = axis < 0 ? axis + r : axis;
      if (axis < 0 || axis >= r) throw Error(label + ": scan output axis out of range");
      st.push_back(stack(ctx, o, axis));
    }
    return st;
  };
  std::vector<ir::Expr> results;
  if (!v8) {
    results = run(states, inputs);
  } else {
    // Scan-8: every input has a batch axis first; each batch element scanned on its own.
    const int64_t B = ir::shape_of(inputs[0])[0];
    check_unroll(*body, B * std::max<int64_t>(1, ir::shape_of(inputs[0]).size() > 1 ? ir::shape_of(inputs[0])[1] : 1), label, "Scan");
    std::vector<std::vector<ir::Expr>> per_batch;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<ir::Expr> st, sc;
      for (const ir::Expr& s : states) st.push_back(take(ctx, s, 0, b));
      for (const ir::Expr& x : inputs) sc.push_back(take(ctx, x, 0, b));
      per_batch.push_back(run(st, sc));
    }
    for (int k = 0; k < N + K; ++k) {
      std::vector<ir::Expr> parts;
      for (const auto& r : per_batch) parts.push_back(r[static_cast<size_t>(k)]);
      results.push_back(stack(ctx, parts, 0));
    }
  }
  for (int k = 0; k < N + K; ++k)
    if (!n.output(k).empty()) scope.bind(n.output(k), results[static_cast<size_t>(k)]);
}

}  // namespace sy::onnx
