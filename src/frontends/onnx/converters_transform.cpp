// Converters of ONNX tensor-transform ops (Reshape, Flatten, Squeeze/Unsqueeze, Transpose, Concat,
// Split, Slice, gathers/scatters, Expand, Tile, Trilu, OneHot, CumSum) and of the ops that
// produce constants from static shapes (Shape, Size, ConstantOfShape, Range, Constant, EyeLike).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "frontends/onnx/converters.h"
#include "frontends/onnx/tensor_proto.h"
#include "ops/op.h"
#include "support/shape_limits.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;

Outs convert_reshape(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  const Shape& in = ir::shape_of(x);
  std::vector<int64_t> spec = c.opset() < 5 ? c.attr_ints("shape") : c.const_ints(1, "shape");
  bool allow_zero = c.attr_int("allowzero", 0) != 0;
  Shape out;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) c.fail("shape[" + std::to_string(i) + "] = 0 copies a dimension the input (rank " +
                                 std::to_string(in.size()) + ") does not have");
      d = in[i];
    }
    if (d == -1) {
      if (infer >= 0) c.fail("shape " + shape_str(spec) + " has more than one -1");
      infer = static_cast<int>(i);
      out.push_back(-1);
      continue;
    }
    if (d < 0) c.fail("shape " + shape_str(spec) + " has a negative dimension");
    out.push_back(d);
    if (__builtin_mul_overflow(known, d, &known)) c.fail("shape " + shape_str(spec) + " is too large");
  }
  int64_t numel = shape_numel(in);
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      c.fail("cannot reshape " + shape_str(in) + " to " + shape_str(spec));
    out[static_cast<size_t>(infer)] = numel / known;
  }
  if (!shape_within_limits(out) || shape_numel(out) != numel)
    c.fail("cannot reshape " + shape_str(in) + " to " + shape_str(spec));
  ops::ReshapeAttrs a;
  a.newshape = out;
  return {c.op(OpCode::Reshape, {x}, a)};
}

Outs convert_flatten(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  const Shape& s = ir::shape_of(x);
  int64_t r = static_cast<int64_t>(s.size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) c.fail("axis " + std::to_string(c.attr_int("axis", 1)) + " is out of range for rank " + std::to_string(r));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= s[static_cast<size_t>(i)];
  ops::ReshapeAttrs a;
  a.newshape = {outer, inner};
  return {c.op(OpCode::Reshape, {x}, a)};
}

// Axes from the attribute (old opsets) or the input (new opsets); nullopt when absent.
std::optional<std::vector<int64_t>> axes_arg(NodeContext& c, int64_t input_since, size_t input_index) {
  if (c.opset() < input_since) {
    if (!c.has_attr("axes")) return std::nullopt;
    return c.attr_ints("axes");
  }
  if (!c.has_input(input_index)) return std::nullopt;
  return c.const_ints(input_index, "axes");
}

Outs convert_squeeze(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  const Shape& s = ir::shape_of(x);
  int64_t r = static_cast<int64_t>(s.size());
  auto axes = axes_arg(c, 13, 1);
  std::set<int64_t> drop;
  if (axes) {
    for (int64_t a : *axes) {
      int64_t ax = c.axis(a, r);
      if (s[static_cast<size_t>(ax)] != 1)
        c.fail("cannot squeeze axis " + std::to_string(a) + " of extent " + std::to_string(s[static_cast<size_t>(ax)]));
      drop.insert(ax);
    }
  } else {
    for (int64_t i = 0; i < r; ++i)
      if (s[static_cast<size_t>(i)] == 1) drop.insert(i);
  }
  Shape out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop.count(i)) out.push_back(s[static_cast<size_t>(i)]);
  ops::ReshapeAttrs a;
  a.newshape = out;
  return {c.op(OpCode::Reshape, {x}, a)};
}

Outs convert_unsqueeze(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  const Shape& s = ir::shape_of(x);
  auto axes = axes_arg(c, 13, 1);
  if (!axes) c.fail("missing axes");
  int64_t out_rank = static_cast<int64_t>(s.size() + axes->size());
  std::set<int64_t> ins;
  for (int64_t a : *axes)
    if (!ins.insert(c.axis(a, out_rank)).second) c.fail("axes " + shape_str(*axes) + " has duplicates");
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(ins.count(i) ? 1 : s[k++]);
  ops::ReshapeAttrs a;
  a.newshape = out;
  return {c.op(OpCode::Reshape, {x}, a)};
}

Outs convert_transpose(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  int64_t r = c.rank(0, "data");
  ops::TransposeAttrs a;
  if (c.has_attr("perm")) {
    a.perm = c.attr_ints("perm");
    if (static_cast<int64_t>(a.perm.size()) != r) c.fail("perm " + shape_str(a.perm) + " does not match rank " + std::to_string(r));
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (auto& p : a.perm) {
      p = c.axis(p, r, "perm entry");
      if (seen[static_cast<size_t>(p)]) c.fail("perm " + shape_str(c.attr_ints("perm")) + " is not a permutation");
      seen[static_cast<size_t>(p)] = true;
    }
  } else {
    for (int64_t i = r - 1; i >= 0; --i) a.perm.push_back(i);
  }
  return {c.op(OpCode::Transpose, {x}, a)};
}

Outs convert_concat(NodeContext& c) {
  std::vector<ir::Expr> xs = c.variadic_inputs(1);
  ops::AxisAttrs a;
  std::optional<int64_t> def;
  if (c.opset() < 4) def = 1;  // Concat-1 defaulted to axis 1
  a.axis = c.axis(c.attr_int("axis", def), static_cast<int64_t>(ir::shape_of(xs[0]).size()));
  return {c.op(OpCode::Concat, xs, a)};
}

Outs convert_split(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  int64_t r = c.rank(0, "input");
  int64_t axis = c.axis(c.attr_int("axis", 0), r);
  int64_t dim = ir::shape_of(x)[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (c.opset() < 13) {
    if (c.has_attr("split")) sizes = c.attr_ints("split");
  } else if (c.has_input(1)) {
    sizes = c.const_ints(1, "split");
  }
  auto n = static_cast<int64_t>(c.num_outputs());
  if (sizes.empty()) {
    if (c.opset() >= 18 && c.has_attr("num_outputs")) {
      n = c.attr_int("num_outputs");
      if (n <= 0) c.fail("num_outputs must be positive");
      int64_t chunk = (dim + n - 1) / n;
      for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    } else {
      if (n <= 0 || dim % n != 0)
        c.fail("axis extent " + std::to_string(dim) + " does not split evenly into " + std::to_string(n) + " outputs");
      sizes.assign(static_cast<size_t>(n), dim / n);
    }
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    c.fail("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
  ops::SplitAttrs a;
  a.axis = axis;
  a.sizes = sizes;
  ir::Expr t = c.op(OpCode::Split, {x}, a);
  Outs outs;
  for (int64_t i = 0; i < n; ++i) outs.push_back(c.tuple_item(t, static_cast<int>(i)));
  return outs;
}

Outs convert_slice(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  const Shape& s = ir::shape_of(x);
  int64_t r = static_cast<int64_t>(s.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    if (c.has_attr("axes")) axes = c.attr_ints("axes");
  } else {
    starts = c.const_ints(1, "starts");
    ends = c.const_ints(2, "ends");
    if (c.has_input(3)) axes = c.const_ints(3, "axes");
    if (c.has_input(4)) steps = c.const_ints(4, "steps");
  }
  if (ends.size() != starts.size()) c.fail("starts and ends have different lengths");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps must have the same length");
  ops::StridedSliceAttrs a;
  for (int64_t i = 0; i < r; ++i) {
    a.begin.push_back(0);
    a.end.push_back(s[static_cast<size_t>(i)]);
    a.strides.push_back(1);
  }
  std::set<int64_t> seen;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t ax = c.axis(axes[i], r);
    if (!seen.insert(ax).second) c.fail("axis " + std::to_string(axes[i]) + " is sliced twice");
    int64_t d = s[static_cast<size_t>(ax)];
    int64_t st = steps[i];
    if (st == 0) c.fail("steps must be non-zero");
    // ONNX clamping, written to avoid overflow with INT64_MIN/INT64_MAX sentinels.
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += d;  // cannot overflow: d >= 0
    if (e < 0) e += d;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
    } else if (d == 0) {
      b = 0;
      e = -1;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
    }
    a.begin[static_cast<size_t>(ax)] = b;
    a.end[static_cast<size_t>(ax)] = e;
    a.strides[static_cast<size_t>(ax)] = st;
  }
  return {c.op(OpCode::StridedSlice, {x}, a)};
}

Outs convert_gather(NodeContext& c) {
  ops::AxisAttrs a;
  a.axis = c.axis(c.attr_int("axis", 0), c.rank(0, "data"));
  return {c.op(OpCode::Gather, {c.input(0, "data"), c.input(1, "indices")}, a)};
}

Outs convert_gather_elements(NodeContext& c) {
  ops::AxisAttrs a;
  a.axis = c.axis(c.attr_int("axis", 0), c.rank(0, "data"));
  return {c.op(OpCode::GatherElements, {c.input(0, "data"), c.input(1, "indices")}, a)};
}

// ReverseSequence-10: along time_axis, the first sequence_lens[b] entries of each batch entry b
// reversed, the rest kept: a GatherElements at t < len ? len - 1 - t : t, so sequence_lens may be a
// runtime input (a length beyond the time axis is an index out of range, reported at run time).
Outs convert_reverse_sequence(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  const Shape xs = c.shape(0, "input");
  const int64_t r = static_cast<int64_t>(xs.size());
  const int64_t batch_axis = c.attr_int("batch_axis", 1), time_axis = c.attr_int("time_axis", 0);
  if (r < 2) c.fail("input must have rank 2 or more, got shape " + shape_str(xs));
  if (batch_axis + time_axis != 1 || batch_axis * time_axis != 0)
    c.fail("batch_axis and time_axis must be 0 and 1 in some order, got " + std::to_string(batch_axis) + " and " +
           std::to_string(time_axis));
  const int64_t B = xs[static_cast<size_t>(batch_axis)], T = xs[static_cast<size_t>(time_axis)];
  const Shape& ls = c.shape(1, "sequence_lens");
  if (ls != Shape{B}) c.fail("sequence_lens must have shape (" + std::to_string(B) + "), got " + shape_str(ls));
  if (!is_integer(c.dtype(1, "sequence_lens"))) c.fail("sequence_lens must be integers");
  Shape along_batch(static_cast<size_t>(r), 1), along_time(static_cast<size_t>(r), 1);
  along_batch[static_cast<size_t>(batch_axis)] = B;
  along_time[static_cast<size_t>(time_axis)] = T;
  ir::Expr len = c.reshape(c.cast(c.input(1, "sequence_lens"), DType::i64), along_batch);
  std::vector<int64_t> steps(static_cast<size_t>(T));
  for (int64_t i = 0; i < T; ++i) steps[static_cast<size_t>(i)] = i;
  ir::Expr t = ir::constant(Tensor::from_vector<int64_t>(along_time, steps));
  ir::Expr reversed = c.op(OpCode::Sub, {c.op(OpCode::Sub, {len, c.scalar(DType::i64, 1)}), t});
  ir::Expr idx = c.op(OpCode::Where, {c.op(OpCode::Less, {t, len}), reversed, t});
  ops::ShapeAttrs full;
  full.shape = xs;
  ops::AxisAttrs a;
  a.axis = time_axis;
  return {c.op(OpCode::GatherElements, {x, c.op(OpCode::BroadcastTo, {idx}, full)}, a)};
}

Outs convert_gather_nd(NodeContext& c) {
  ops::BatchDimsAttrs a;
  a.batch_dims = c.attr_int("batch_dims", 0);
  return {c.op(OpCode::GatherND, {c.input(0, "data"), c.input(1, "indices")}, a)};
}

std::string scatter_reduction(NodeContext& c) {
  std::string red = c.attr_string("reduction", "none");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min") c.fail("unknown reduction '" + red + "'");
  return red;
}

Outs convert_scatter_elements(NodeContext& c) {
  ops::ScatterAttrs a;
  a.axis = c.axis(c.attr_int("axis", 0), c.rank(0, "data"));
  a.reduction = scatter_reduction(c);
  return {c.op(OpCode::ScatterElements, {c.input(0, "data"), c.input(1, "indices"), c.input(2, "updates")}, a)};
}

Outs convert_scatter_nd(NodeContext& c) {
  ops::ScatterAttrs a;
  a.reduction = scatter_reduction(c);
  return {c.op(OpCode::ScatterND, {c.input(0, "data"), c.input(1, "indices"), c.input(2, "updates")}, a)};
}

// Expand broadcasts both ways: the result shape is broadcast(input shape, given shape).
Outs convert_expand(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  const Shape& s = ir::shape_of(x);
  std::vector<int64_t> target = c.const_ints(1, "shape");
  size_t r = std::max(s.size(), target.size());
  Shape out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t a = i + s.size() >= r ? s[i + s.size() - r] : 1;
    int64_t b = i + target.size() >= r ? target[i + target.size() - r] : 1;
    if (b < 0) c.fail("shape " + shape_str(target) + " has a negative dimension");
    if (a != b && a != 1 && b != 1)
      c.fail("cannot expand " + shape_str(s) + " to " + shape_str(target));
    out[i] = a == 1 ? b : a;
  }
  if (out == s) return {x};
  ops::ShapeAttrs a;
  a.shape = out;
  return {c.op(OpCode::BroadcastTo, {x}, a)};
}

Outs convert_tile(NodeContext& c) {
  ops::RepsAttrs a;
  a.reps = c.const_ints(1, "repeats");
  if (static_cast<int64_t>(a.reps.size()) != c.rank(0, "input"))
    c.fail("repeats has " + std::to_string(a.reps.size()) + " values for an input of rank " + std::to_string(c.rank(0, "input")));
  for (int64_t v : a.reps)
    if (v < 0) c.fail("repeats must be non-negative");
  return {c.op(OpCode::Tile, {c.input(0, "input")}, a)};
}

Outs convert_trilu(NodeContext& c) {
  ops::TriluAttrs a;
  a.upper = c.attr_int("upper", 1) != 0;
  if (auto k = c.optional_const_input(1, "k")) {
    if (k->numel() != 1) c.fail("k must be a scalar");
    a.k = k->get_as_int(0);
  }
  if (c.rank(0, "input") < 2) c.fail("input must have rank >= 2");
  return {c.op(OpCode::Trilu, {c.input(0, "input")}, a)};
}

Outs convert_one_hot(NodeContext& c) {
  ir::Expr idx = c.input(0, "indices");
  Tensor depth = c.const_input(1, "depth");
  if (depth.numel() != 1) c.fail("depth must be a scalar");
  ops::OneHotAttrs a;
  double d = depth.get_as_double(0);
  if (!(d >= 1) || d > 1e9) c.fail("depth must be a positive integer, got " + std::to_string(d));
  a.depth = static_cast<int64_t>(d);
  a.axis = c.axis(c.attr_int("axis", -1), c.rank(0, "indices") + 1);
  ir::Expr values = c.input(2, "values");
  if (shape_numel(ir::shape_of(values)) != 2) c.fail("values must have 2 elements [off, on]");
  return {c.op(OpCode::OneHot, {idx, c.reshape(values, {2})}, a)};
}

Outs convert_det(NodeContext& c) { return {c.op(OpCode::Det, {c.input(0, "X")})}; }

Outs convert_cumsum(NodeContext& c) {
  Tensor axis = c.const_input(1, "axis");
  if (axis.numel() != 1 || !is_integer(axis.dtype())) c.fail("axis must be an integer scalar");
  ops::CumSumAttrs a;
  a.axis = c.axis(axis.get_as_int(0), c.rank(0, "x"));
  a.exclusive = c.attr_int("exclusive", 0) != 0;
  a.reverse = c.attr_int("reverse", 0) != 0;
  return {c.op(OpCode::CumSum, {c.input(0, "x")}, a)};
}

// Compress with a static condition is a gather of the selected positions.
Outs convert_compress(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  Tensor cond = c.const_input(1, "condition");
  if (cond.ndim() != 1) c.fail("condition must be 1-D");
  int64_t axis = 0;
  if (c.has_attr("axis")) {
    axis = c.axis(c.attr_int("axis"), c.rank(0, "input"));
  } else {
    x = c.reshape(x, {shape_numel(ir::shape_of(x))});
  }
  int64_t dim = ir::shape_of(x)[static_cast<size_t>(axis)];
  if (cond.numel() > dim) c.fail("condition has " + std::to_string(cond.numel()) + " entries for an axis of extent " + std::to_string(dim));
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (cond.get_as_double(i) != 0) idx.push_back(i);
  ops::AxisAttrs a;
  a.axis = axis;
  return {c.op(OpCode::Gather, {x, ir::constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(idx.size())}, idx))}, a)};
}

// ---- ops whose results are constants because shapes are static ----

// NonZero's output shape depends on the data: only a constant input can be converted.
Outs convert_non_zero(NodeContext& c) {
  Tensor x = c.const_input(0, "X");
  const Shape& s = x.shape();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.get_as_double(i) != 0) hits.push_back(i);
  auto rank = static_cast<int64_t>(s.size());
  auto nnz = static_cast<int64_t>(hits.size());
  Tensor out(DType::i64, {rank, nnz});
  int64_t* p = out.data<int64_t>();
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = hits[static_cast<size_t>(k)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      p[d * nnz + k] = flat % s[static_cast<size_t>(d)];
      flat /= s[static_cast<size_t>(d)];
    }
  }
  return {ir::constant(out)};
}

Outs convert_shape(NodeContext& c) {
  const Shape& s = c.shape(0, "data");
  auto r = static_cast<int64_t>(s.size());
  int64_t start = c.attr_int("start", 0), end = c.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i) v.push_back(s[static_cast<size_t>(i)]);
  return {ir::constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v))};
}

Outs convert_size(NodeContext& c) {
  return {ir::constant(Tensor::scalar<int64_t>(shape_numel(c.shape(0, "data"))))};
}

Tensor filled(DType dt, const Shape& shape, const Tensor& value) {
  Tensor t(dt, shape);
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T v = value.data<T>()[0];
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = v;
  });
  return t;
}

Outs convert_constant_of_shape(NodeContext& c) {
  std::vector<int64_t> shape = c.const_ints(0, "input");
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) c.fail("shape " + shape_str(shape) + " has a negative dimension");
    if (d > 0 && numel > (int64_t{1} << 34) / d) c.fail("shape " + shape_str(shape) + " is absurdly large");
    numel *= d;
  }
  Tensor value = Tensor::from_vector<float>({1}, {0.0f});
  if (c.has_attr("value")) {
    value = c.attr_tensor("value");
    if (value.numel() != 1) c.fail("attribute 'value' must have one element");
  }
  return {ir::constant(filled(value.dtype(), shape, value))};
}

Outs convert_range(NodeContext& c) {
  Tensor start = c.const_input(0, "start"), limit = c.const_input(1, "limit"), delta = c.const_input(2, "delta");
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1) c.fail("start, limit and delta must be scalars");
  DType dt = start.dtype();
  if (limit.dtype() != dt || delta.dtype() != dt) c.fail("start, limit and delta must have the same dtype");
  if (dt == DType::boolean) c.fail("Range of bool");
  return {dispatch_dtype(dt, [&](auto tag) -> ir::Expr {
    using T = decltype(tag);
    T s = start.data<T>()[0], l = limit.data<T>()[0], d = delta.data<T>()[0];
    if (d == T(0)) c.fail("delta must be non-zero");
    double n = std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
    if (!(n <= double(int64_t{1} << 32))) c.fail("Range would have an absurd number of elements");
    auto count = static_cast<int64_t>(std::max(0.0, n));
    Tensor t(dt, {count});
    T* p = t.data<T>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<T>(s + static_cast<T>(i) * d);
    return ir::constant(t);
  })};
}

Outs convert_constant(NodeContext& c) {
  std::vector<std::string> names = c.attr_names();
  if (names.size() != 1) c.fail("must have exactly one value attribute");
  const std::string& n = names[0];
  if (n == "value") return {ir::constant(c.attr_tensor("value"))};
  if (n == "value_float") return {ir::constant(Tensor::scalar<float>(static_cast<float>(c.attr_float(n))))};
  if (n == "value_int") return {ir::constant(Tensor::scalar<int64_t>(c.attr_int(n)))};
  if (n == "value_floats") {
    std::vector<float> v;
    for (double f : c.attr_floats(n)) v.push_back(static_cast<float>(f));
    return {ir::constant(Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v))};
  }
  if (n == "value_ints") {
    std::vector<int64_t> v = c.attr_ints(n);
    return {ir::constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v))};
  }
  if (n == "value_string" || n == "value_strings") c.unsupported("dtype string (Constant " + n + ")");
  if (n == "sparse_value") c.unsupported("sparse Constant");
  c.fail("unknown attribute '" + n + "'");
}

Outs convert_eye_like(NodeContext& c) {
  const Shape& s = c.shape(0, "input");
  if (s.size() != 2) c.fail("input must be 2-D, got shape " + shape_str(s));
  DType dt = c.dtype(0, "input");
  if (c.has_attr("dtype")) {
    auto d = dtype_from_onnx(static_cast<int32_t>(c.attr_int("dtype")));
    if (!d) c.unsupported("dtype " + onnx_dtype_name(static_cast<int32_t>(c.attr_int("dtype"))));
    dt = *d;
  }
  int64_t k = c.attr_int("k", 0);
  Tensor t(dt, s);
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0; i < s[0]; ++i) {
      int64_t j = i + k;
      if (j >= 0 && j < s[1]) p[i * s[1] + j] = static_cast<T>(1);
    }
  });
  return {ir::constant(t)};
}

}  // namespace

void register_transform_converters(ConverterTable& t) {
  t.add("Reshape", 1, convert_reshape);
  t.add("Flatten", 1, convert_flatten);
  t.add("Squeeze", 1, convert_squeeze);
  t.add("Unsqueeze", 1, convert_unsqueeze);
  t.add("Transpose", 1, convert_transpose);
  t.add("Concat", 1, convert_concat);
  t.add("Split", 2, convert_split);
  t.add("Slice", 1, convert_slice);
  t.add("Gather", 1, convert_gather);
  t.add("GatherElements", 11, convert_gather_elements);
  t.add("ReverseSequence", 10, convert_reverse_sequence);
  t.add("GatherND", 11, convert_gather_nd);
  t.add("Scatter", 9, convert_scatter_elements);
  t.add("ScatterElements", 11, convert_scatter_elements);
  t.add("ScatterND", 11, convert_scatter_nd);
  t.add("Expand", 8, convert_expand);
  t.add("Tile", 6, convert_tile);
  t.add("Trilu", 14, convert_trilu);
  t.add("OneHot", 9, convert_one_hot);
  t.add("CumSum", 11, convert_cumsum);
  t.add("Det", 11, convert_det);
  t.add("Compress", 9, convert_compress);
  t.add("NonZero", 9, convert_non_zero);
  t.add("Shape", 1, convert_shape);
  t.add("Size", 1, convert_size);
  t.add("ConstantOfShape", 9, convert_constant_of_shape);
  t.add("Range", 11, convert_range);
  t.add("Constant", 1, convert_constant);
  t.add("EyeLike", 9, convert_eye_like);
}

}  // namespace sy::onnx
