// Converters of ONNX reductions (ReduceX with axes as attribute or input), ArgMax/ArgMin, TopK.
#include <algorithm>

#include "frontends/onnx/converters.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;

// axes became an input in opset 13 for ReduceSum and in opset 18 for the other reductions.
template <OpCode Code, int AxesInputSince>
Outs reduce(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  int64_t r = c.rank(0, "data");
  std::vector<int64_t> axes;
  if (c.opset() < AxesInputSince) {
    if (c.has_attr("axes")) axes = c.attr_ints("axes");
  } else if (c.has_input(1)) {
    axes = c.const_ints(1, "axes");
  }
  ops::ReduceAttrs a;
  a.keepdims = c.attr_int("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.opset() >= AxesInputSince && c.attr_int("noop_with_empty_axes", 0) != 0) return {x};
    for (int64_t i = 0; i < r; ++i) a.axes.push_back(i);
  } else {
    for (int64_t ax : axes) a.axes.push_back(c.axis(ax, r));
    std::sort(a.axes.begin(), a.axes.end());
    if (std::adjacent_find(a.axes.begin(), a.axes.end()) != a.axes.end()) c.fail("axes " + shape_str(axes) + " has duplicates");
  }
  return {c.op(Code, {x}, a)};
}

template <OpCode Code>
Outs arg_reduce(NodeContext& c) {
  ops::ArgReduceAttrs a;
  a.axis = c.axis(c.attr_int("axis", 0), c.rank(0, "data"));
  a.keepdims = c.attr_int("keepdims", 1) != 0;
  a.select_last_index = c.attr_int("select_last_index", 0) != 0;
  return {c.op(Code, {c.input(0, "data")}, a)};
}

Outs convert_topk(NodeContext& c) {
  ir::Expr x = c.input(0, "X");
  ops::TopKAttrs a;
  if (c.opset() < 10) {
    a.k = c.attr_int("k");
  } else {
    std::vector<int64_t> k = c.const_ints(1, "K");
    if (k.size() != 1) c.fail("K must have one element");
    a.k = k[0];
  }
  a.axis = c.axis(c.attr_int("axis", -1), c.rank(0, "X"));
  a.largest = c.attr_int("largest", 1) != 0;
  a.sorted = c.attr_int("sorted", 1) != 0;
  int64_t dim = ir::shape_of(x)[static_cast<size_t>(a.axis)];
  if (a.k < 0 || a.k > dim) c.fail("k = " + std::to_string(a.k) + " is out of range for an axis of extent " + std::to_string(dim));
  ir::Expr t = c.op(OpCode::TopK, {x}, a);
  return {c.tuple_item(t, 0), c.tuple_item(t, 1)};
}

}  // namespace

void register_reduce_converters(ConverterTable& t) {
  t.add("ReduceSum", 1, reduce<OpCode::ReduceSum, 13>);
  t.add("ReduceMean", 1, reduce<OpCode::ReduceMean, 18>);
  t.add("ReduceMax", 1, reduce<OpCode::ReduceMax, 18>);
  t.add("ReduceMin", 1, reduce<OpCode::ReduceMin, 18>);
  t.add("ReduceProd", 1, reduce<OpCode::ReduceProd, 18>);
  t.add("ReduceL1", 1, reduce<OpCode::ReduceL1, 18>);
  t.add("ReduceL2", 1, reduce<OpCode::ReduceL2, 18>);
  t.add("ReduceSumSquare", 1, reduce<OpCode::ReduceSumSquare, 18>);
  t.add("ReduceLogSum", 1, reduce<OpCode::ReduceLogSum, 18>);
  t.add("ReduceLogSumExp", 1, reduce<OpCode::ReduceLogSumExp, 18>);
  t.add("ArgMax", 1, arg_reduce<OpCode::ArgMax>);
  t.add("ArgMin", 1, arg_reduce<OpCode::ArgMin>);
  t.add("TopK", 1, convert_topk);
}

}  // namespace sy::onnx
