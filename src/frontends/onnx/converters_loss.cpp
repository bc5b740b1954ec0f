// Converters of the ONNX loss ops (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), composed
// of gathers, masks and reductions as their ONNX function bodies are.
#include "frontends/onnx/converters.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;

ops::ReduceAttrs all_axes(int64_t rank) {
  ops::ReduceAttrs a;
  for (int64_t i = 0; i < rank; ++i) a.axes.push_back(i);
  a.keepdims = false;
  return a;
}

// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target], 0 where target == ignore_index;
// then reduced by `reduction` (mean divides by the sum of the applied weights).
ir::Expr nll_loss(NodeContext& c, const ir::Expr& input, const ir::Expr& target, const ir::Expr& weight) {
  const Shape& is = ir::shape_of(input);
  const Shape& ts = ir::shape_of(target);
  if (is.size() < 2) c.fail("input must have shape (N, C, d1, ...), got " + shape_str(is));
  Shape want_t = is;
  want_t.erase(want_t.begin() + 1);
  if (ts != want_t) c.fail("target of shape " + shape_str(ts) + " does not match input of shape " + shape_str(is));
  if (!is_integer(ir::dtype_of(target))) c.fail("target must be an integer tensor");
  std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") c.fail("unknown reduction '" + reduction + "'");
  DType dt = ir::dtype_of(input), it = ir::dtype_of(target);

  ir::Expr idx = target, mask;
  if (c.has_attr("ignore_index")) {
    // Ignored targets may be out of range: gather at 0 there and zero the result.
    ir::Expr ignored = c.op(OpCode::Equal, {target, NodeContext::scalar(it, static_cast<double>(c.attr_int("ignore_index")))});
    mask = c.cast(c.op(OpCode::LogicalNot, {ignored}), dt);
    idx = c.op(OpCode::Where, {ignored, NodeContext::scalar(it, 0), target});
  }
  Shape idx_shape = ts;
  idx_shape.insert(idx_shape.begin() + 1, 1);
  ops::AxisAttrs ax;
  ax.axis = 1;
  ir::Expr picked = c.reshape(c.op(OpCode::GatherElements, {input, c.reshape(idx, idx_shape)}, ax), ts);
  ir::Expr loss = c.op(OpCode::Neg, {picked});
  ir::Expr w;
  if (weight) {
    ops::AxisAttrs g;
    g.axis = 0;
    w = c.op(OpCode::Gather, {weight, idx}, g);
  }
  if (mask) w = w ? c.op(OpCode::Mul, {w, mask}) : mask;
  if (w) loss = c.op(OpCode::Mul, {loss, w});
  if (reduction == "none") return loss;
  auto rank = static_cast<int64_t>(ts.size());
  ir::Expr total = c.op(OpCode::ReduceSum, {loss}, all_axes(rank));
  if (reduction == "sum") return total;
  if (!w) return c.op(OpCode::ReduceMean, {loss}, all_axes(rank));
  return c.op(OpCode::Div, {total, c.op(OpCode::ReduceSum, {w}, all_axes(rank))});
}

Outs convert_nll_loss(NodeContext& c) {
  return {nll_loss(c, c.input(0, "input"), c.input(1, "target"), c.optional_input(2))};
}

Outs convert_softmax_cross_entropy(NodeContext& c) {
  ir::Expr scores = c.input(0, "scores");
  if (c.rank(0, "scores") < 2) c.fail("scores must have shape (N, C, d1, ...)");
  ops::AxisAttrs a;
  a.axis = 1;
  ir::Expr log_prob = c.op(OpCode::LogSoftmax, {scores}, a);
  return {nll_loss(c, log_prob, c.input(1, "labels"), c.optional_input(2)), log_prob};
}

}  // namespace

void register_loss_converters(ConverterTable& t) {
  t.add("NegativeLogLikelihoodLoss", 12, convert_nll_loss);
  t.add("SoftmaxCrossEntropyLoss", 12, convert_softmax_cross_entropy);
}

}  // namespace sy::onnx
