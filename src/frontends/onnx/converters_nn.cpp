// Converters of neural-network ONNX ops: convolutions and pooling (auto_pad resolved, 1-D lifted to
// 2-D), normalisations, softmax family, Gemm/MatMul, Pad, depth/space shuffles, Resize/Upsample.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "frontends/onnx/converters.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;

std::string join(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Spatial attributes of a conv/pool node, normalised to 2-D (a 1-D node gets a leading unit axis).
struct Window {
  bool one_d = false;
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pads;  // [top, left, bottom, right]
};

// Checks the spatial rank (1-D and 2-D supported) and returns whether the node is 1-D.
bool spatial_is_1d(NodeContext& c, int64_t rank, const char* what) {
  if (rank == 3) return true;
  if (rank == 4) return false;
  if (rank == 5) c.unsupported(std::string("3-D ") + what + " (of the 3-D ops only Conv, ConvTranspose, MaxPool and AveragePool are supported)");
  c.fail(std::string("input X must have rank 3 or 4 (N, C, spatial...), got rank ") + std::to_string(rank));
}

std::vector<int64_t> spatial_attr(NodeContext& c, const char* name, size_t n, int64_t def) {
  std::vector<int64_t> v = c.attr_ints(name, std::vector<int64_t>(n, def));
  if (v.size() != n) c.fail(std::string("attribute '") + name + "' has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
  return v;
}

}  // namespace

SpatialWindow resolve_spatial(NodeContext& c, const Shape& in_spatial, std::vector<int64_t> kernel) {
  size_t n = in_spatial.size();
  SpatialWindow w;
  w.kernel = std::move(kernel);
  w.strides = spatial_attr(c, "strides", n, 1);
  w.dilations = spatial_attr(c, "dilations", n, 1);
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] <= 0) c.fail("strides must be positive, got " + join(w.strides));
    if (w.dilations[i] <= 0) c.fail("dilations must be positive, got " + join(w.dilations));
    if (w.kernel[i] <= 0) c.fail("kernel_shape must be positive, got " + join(w.kernel));
  }
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  w.begin.assign(n, 0);
  w.end.assign(n, 0);
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = spatial_attr(c, "pads", 2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      w.begin[i] = pads[i];
      w.end[i] = pads[n + i];
      if (w.begin[i] < 0 || w.end[i] < 0) c.fail("pads must be non-negative, got " + join(pads));
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      int64_t out = (in_spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t eff_k = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + eff_k - in_spatial[i]);
      w.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.end[i] = total - w.begin[i];
    }
  } else if (auto_pad != "VALID") {
    c.fail("unknown auto_pad '" + auto_pad + "'");
  }
  return w;
}

namespace {

// A conv/pool window normalised to 2-D: a 1-D node gets a leading unit axis.
Window resolve_window(NodeContext& c, const Shape& in_spatial, std::vector<int64_t> kernel) {
  SpatialWindow sw = resolve_spatial(c, in_spatial, std::move(kernel));
  Window w;
  w.kernel = sw.kernel;
  w.strides = sw.strides;
  w.dilations = sw.dilations;
  if (in_spatial.size() == 1) {
    w.one_d = true;
    w.kernel.insert(w.kernel.begin(), 1);
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    w.pads = {0, sw.begin[0], 0, sw.end[0]};
  } else {
    w.pads = {sw.begin[0], sw.begin[1], sw.end[0], sw.end[1]};
  }
  return w;
}

// [N, C, L] -> [N, C, 1, L]
ir::Expr lift_1d(NodeContext& c, const ir::Expr& x) {
  Shape s = ir::shape_of(x);
  s.insert(s.begin() + 2, 1);
  return c.reshape(x, s);
}
ir::Expr lower_1d(NodeContext& c, const ir::Expr& y) {
  Shape s = ir::shape_of(y);
  s.erase(s.begin() + 2);
  return c.reshape(y, s);
}

}  // namespace

ir::Expr build_conv(NodeContext& c, const ir::Expr& x, const ir::Expr& w, const ir::Expr& bias) {
  if (ir::shape_of(x).size() == 5) return build_conv3d(c, x, w, bias);
  bool one_d = spatial_is_1d(c, static_cast<int64_t>(ir::shape_of(x).size()), "convolution");
  const Shape& ws = ir::shape_of(w);
  if (ws.size() != ir::shape_of(x).size()) c.fail("weight rank " + std::to_string(ws.size()) + " does not match input rank");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != kernel)
    c.fail("kernel_shape " + join(c.attr_ints("kernel_shape")) + " does not match the weight's " + join(kernel));
  const Shape& xs = ir::shape_of(x);
  Window win = resolve_window(c, Shape(xs.begin() + 2, xs.end()), kernel);
  ops::Conv2dAttrs a;
  a.strides = win.strides;
  a.dilation = win.dilations;
  a.padding = win.pads;
  a.groups = c.attr_int("group", 1);
  std::vector<ir::Expr> args{one_d ? lift_1d(c, x) : x, one_d ? lift_1d(c, w) : w};
  if (bias) args.push_back(bias);
  ir::Expr y = c.op(OpCode::Conv2d, args, a);
  return one_d ? lower_1d(c, y) : y;
}

namespace {

Outs convert_conv(NodeContext& c) {
  return {build_conv(c, c.input(0, "X"), c.input(1, "W"), c.has_input(2) ? c.input(2, "B") : nullptr)};
}

Outs convert_conv_transpose(NodeContext& c) {
  ir::Expr x = c.input(0, "X"), w = c.input(1, "W");
  const bool three_d = c.rank(0, "X") == 5;
  bool one_d = !three_d && spatial_is_1d(c, c.rank(0, "X"), "transposed convolution");
  const Shape& xs = ir::shape_of(x);
  const Shape& ws = ir::shape_of(w);
  if (ws.size() != xs.size()) c.fail("weight rank " + std::to_string(ws.size()) + " does not match input rank");
  size_t n = xs.size() - 2;
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != kernel)
    c.fail("kernel_shape " + join(c.attr_ints("kernel_shape")) + " does not match the weight's " + join(kernel));
  std::vector<int64_t> strides = spatial_attr(c, "strides", n, 1);
  std::vector<int64_t> dil = spatial_attr(c, "dilations", n, 1);
  std::vector<int64_t> out_pad = spatial_attr(c, "output_padding", n, 0);
  for (size_t i = 0; i < n; ++i)
    if (strides[i] <= 0 || dil[i] <= 0) c.fail("strides and dilations must be positive");
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> begin(n, 0), end(n, 0);
  std::vector<int64_t> out_shape;
  if (c.has_attr("output_shape")) {
    out_shape = c.attr_ints("output_shape");
    if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (out_shape.size() != n) c.fail("output_shape " + join(out_shape) + " has the wrong length");
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) out_shape.push_back(xs[2 + i] * strides[i]);
  }
  if (!out_shape.empty()) {
    // Total padding that yields the requested size (ONNX's formula); a negative total grows the
    // end of the output, which is what output_padding does.
    for (size_t i = 0; i < n; ++i) {
      int64_t total = strides[i] * (xs[2 + i] - 1) + out_pad[i] + ((kernel[i] - 1) * dil[i] + 1) - out_shape[i];
      if (auto_pad == "SAME_UPPER") {
        begin[i] = floordiv(total, 2);
        end[i] = total - begin[i];
      } else {
        end[i] = floordiv(total, 2);
        begin[i] = total - end[i];
      }
      if (end[i] < 0) {
        out_pad[i] -= end[i];
        end[i] = 0;
      }
      if (begin[i] < 0) c.unsupported("ConvTranspose output_shape " + join(out_shape) + " (needs negative padding)");
    }
  } else if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = spatial_attr(c, "pads", 2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      begin[i] = pads[i];
      end[i] = pads[n + i];
    }
  } else if (auto_pad != "VALID") {
    c.fail("unknown auto_pad '" + auto_pad + "'");
  }
  if (three_d)
    return {build_conv_transpose3d(c, x, w, c.optional_input(2), {strides, dil, out_pad, begin, end, c.attr_int("group", 1)})};
  ops::ConvTranspose2dAttrs a;
  a.groups = c.attr_int("group", 1);
  if (one_d) {
    a.strides = {1, strides[0]};
    a.dilation = {1, dil[0]};
    a.output_padding = {0, out_pad[0]};
    a.padding = {0, begin[0], 0, end[0]};
  } else {
    a.strides = strides;
    a.dilation = dil;
    a.output_padding = out_pad;
    a.padding = {begin[0], begin[1], end[0], end[1]};
  }
  std::vector<ir::Expr> args{one_d ? lift_1d(c, x) : x, one_d ? lift_1d(c, w) : w};
  if (c.has_input(2)) args.push_back(c.input(2, "B"));
  ir::Expr y = c.op(OpCode::ConvTranspose2d, args, a);
  return {one_d ? lower_1d(c, y) : y};
}

// MaxPool's Indices: the flat index (n, c, h, w row-major; h and w swapped for storage_order 1)
// of each window's first maximum, as ONNX Runtime and PyTorch pick it: the taps scanned in order, a
// later one taken where it is greater or where no tap inside the input was taken yet (a window of
// -inf). Each tap is a strided slice of the padded input and a sum of small index constants, so
// the whole is one elementwise kernel.
ir::Expr max_pool_indices(NodeContext& c, const ir::Expr& x, const Window& win, const Shape& ys, int64_t storage_order) {
  const Shape& xs = ir::shape_of(x);
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], OH = ys[2], OW = ys[3];
  const int64_t top = win.pads[0], left = win.pads[1];
  const int64_t need_h = (OH - 1) * win.strides[0] + (win.kernel[0] - 1) * win.dilations[0] + 1;
  const int64_t need_w = (OW - 1) * win.strides[1] + (win.kernel[1] - 1) * win.dilations[1] + 1;
  ops::PadAttrs pad;
  pad.pads = {0, 0, top, left, 0, 0, std::max<int64_t>(0, need_h - H - top), std::max<int64_t>(0, need_w - W - left)};
  pad.value = -std::numeric_limits<double>::infinity();
  const ir::Expr xp = c.op(OpCode::Pad, {x}, pad);
  std::vector<int64_t> base(static_cast<size_t>(N * C));
  for (int64_t i = 0; i < N * C; ++i) base[static_cast<size_t>(i)] = i * H * W;
  const ir::Expr base_c = ir::constant(Tensor::from_vector<int64_t>({N, C, 1, 1}, base));
  ir::Expr best, best_idx, any;
  for (int64_t i = 0; i < win.kernel[0]; ++i)
    for (int64_t j = 0; j < win.kernel[1]; ++j) {
      ops::StridedSliceAttrs sl;
      sl.begin = {0, 0, i * win.dilations[0], j * win.dilations[1]};
      sl.end = {N, C, i * win.dilations[0] + (OH - 1) * win.strides[0] + 1, j * win.dilations[1] + (OW - 1) * win.strides[1] + 1};
      sl.strides = {1, 1, win.strides[0], win.strides[1]};
      ir::Expr v = c.op(OpCode::StridedSlice, {xp}, sl);
      // The input row and column each output position's tap reads, and whether it is inside.
      std::vector<int64_t> rows(static_cast<size_t>(OH)), cols(static_cast<size_t>(OW));
      std::vector<bool> row_in(static_cast<size_t>(OH)), col_in(static_cast<size_t>(OW));
      for (int64_t o = 0; o < OH; ++o) {
        const int64_t h = o * win.strides[0] + i * win.dilations[0] - top;
        rows[static_cast<size_t>(o)] = storage_order ? h : h * W;
        row_in[static_cast<size_t>(o)] = h >= 0 && h < H;
      }
      for (int64_t o = 0; o < OW; ++o) {
        const int64_t w = o * win.strides[1] + j * win.dilations[1] - left;
        cols[static_cast<size_t>(o)] = storage_order ? w * H : w;
        col_in[static_cast<size_t>(o)] = w >= 0 && w < W;
      }
      ir::Expr at = c.op(OpCode::Add, {c.op(OpCode::Add, {base_c, ir::constant(Tensor::from_vector<int64_t>({1, 1, OH, 1}, rows))}),
                                       ir::constant(Tensor::from_vector<int64_t>({1, 1, 1, OW}, cols))});
      ir::Expr inside = c.op(OpCode::LogicalAnd, {ir::constant(Tensor::from_vector<bool>({1, 1, OH, 1}, row_in)),
                                                  ir::constant(Tensor::from_vector<bool>({1, 1, 1, OW}, col_in))});
      if (!best) {
        best = v, best_idx = at, any = inside;
        continue;
      }
      ir::Expr take = c.op(OpCode::LogicalAnd,
                           {inside, c.op(OpCode::LogicalOr, {c.op(OpCode::Greater, {v, best}), c.op(OpCode::LogicalNot, {any})})});
      best = c.op(OpCode::Where, {take, v, best});
      best_idx = c.op(OpCode::Where, {take, at, best_idx});
      any = c.op(OpCode::LogicalOr, {any, inside});
    }
  ops::ShapeAttrs full;
  full.shape = ys;
  return ir::shape_of(best_idx) == ys ? best_idx : c.op(OpCode::BroadcastTo, {best_idx}, full);
}

Outs convert_pool(NodeContext& c, OpCode code) {
  ir::Expr x = c.input(0, "X");
  if (c.rank(0, "X") == 5 && code != OpCode::LpPool2d) {
    if (code == OpCode::MaxPool2d && c.num_outputs() > 1 && c.output_used(1)) c.unsupported("MaxPool output 'Indices'");
    return {build_pool3d(c, x, code)};
  }
  bool one_d = spatial_is_1d(c, c.rank(0, "X"), "pooling");
  const Shape& xs = ir::shape_of(x);
  size_t n = xs.size() - 2;
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != n) c.fail("kernel_shape " + join(kernel) + " does not match the input's spatial rank");
  Window win = resolve_window(c, Shape(xs.begin() + 2, xs.end()), kernel);
  ops::Pool2dAttrs a;
  a.kernel = win.kernel;
  a.strides = win.strides;
  a.dilation = win.dilations;
  a.padding = win.pads;
  a.ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  if (code == OpCode::AvgPool2d) a.count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  if (code == OpCode::LpPool2d) {
    // LpPool-1 had a float p; later versions an int.
    double p = c.attr_number("p", 2);
    if (!(p >= 1 && p <= 1e6) || p != std::floor(p)) c.unsupported("LpPool p = " + std::to_string(p) + " (needs a positive integer)");
    a.p = static_cast<int64_t>(p);
  }
  ir::Expr y = c.op(code, {one_d ? lift_1d(c, x) : x}, a);
  if (code == OpCode::MaxPool2d && c.num_outputs() > 1 && c.output_used(1)) {
    ir::Expr idx = max_pool_indices(c, one_d ? lift_1d(c, x) : x, win, ir::shape_of(y), c.attr_int("storage_order", 0));
    return {one_d ? lower_1d(c, y) : y, one_d ? lower_1d(c, idx) : idx};
  }
  return {one_d ? lower_1d(c, y) : y};
}

// MaxUnpool-9/11: X's values written at the flat positions I gives (MaxPool's Indices) of a zero
// tensor of the output shape: a ScatterElements over the flattened output (an index outside it
// is the scatter's run-time error; of repeated indices the last write stays, as ONNX Runtime's).
Outs convert_max_unpool(NodeContext& c) {
  ir::Expr x = c.input(0, "X"), idx = c.input(1, "I");
  const Shape xs = c.shape(0, "X");
  if (xs.size() != 4 && xs.size() != 3) c.unsupported("MaxUnpool of a rank-" + std::to_string(xs.size()) + " input (1-D or 2-D only)");
  if (c.shape(1, "I") != xs) c.fail("I has shape " + shape_str(c.shape(1, "I")) + ", X " + shape_str(xs));
  const size_t n = xs.size() - 2;
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != n) c.fail("kernel_shape " + join(kernel) + " does not match the input's spatial rank");
  const std::vector<int64_t> strides = spatial_attr(c, "strides", n, 1), pads = spatial_attr(c, "pads", 2 * n, 0);
  Shape out = {xs[0], xs[1]};
  for (size_t i = 0; i < n; ++i) out.push_back((xs[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[n + i]);
  // A given output_shape pads the unpooled tensor at the end of each axis (the indices keep the
  // positions of the shape the window gives, as ONNX's reference places them).
  Shape given_shape = out;
  if (auto given = c.optional_const_input(2, "output_shape")) {
    given_shape = given->to_int_vector();
    bool fits = given_shape.size() == xs.size() && given_shape[0] == xs[0] && given_shape[1] == xs[1];
    for (size_t i = 2; fits && i < xs.size(); ++i) fits = given_shape[i] >= out[i];
    if (!fits) c.fail("output_shape " + join(given_shape) + " is smaller than the unpooled " + shape_str(out) + " or has other N, C");
  }
  for (int64_t d : out)
    if (d <= 0) c.fail("output shape " + shape_str(out) + " is empty");
  const int64_t count = shape_numel(xs);
  ops::ShapeAttrs zeros_shape;
  zeros_shape.shape = {shape_numel(out)};
  ir::Expr zeros = c.op(OpCode::BroadcastTo, {c.scalar(ir::dtype_of(x), 0)}, zeros_shape);
  ops::ScatterAttrs a;
  ir::Expr flat = c.op(OpCode::ScatterElements, {zeros, c.reshape(c.cast(idx, DType::i64), {count}), c.reshape(x, {count})}, a);
  ir::Expr y = c.reshape(flat, out);
  if (given_shape == out) return {y};
  ops::PadAttrs grow;
  grow.pads.assign(2 * xs.size(), 0);
  for (size_t i = 2; i < xs.size(); ++i) grow.pads[xs.size() + i] = given_shape[i] - out[i];
  return {c.op(OpCode::Pad, {y}, grow)};
}
Outs convert_max_pool(NodeContext& c) { return convert_pool(c, OpCode::MaxPool2d); }
Outs convert_avg_pool(NodeContext& c) { return convert_pool(c, OpCode::AvgPool2d); }
Outs convert_lp_pool(NodeContext& c) { return convert_pool(c, OpCode::LpPool2d); }

// Global pooling: the 2-D op for NCHW, a reduction over all spatial axes otherwise.
template <OpCode Code2d, OpCode Reduce>
Outs global_pool(NodeContext& c) {
  ir::Expr x = c.input(0, "X");
  int64_t r = c.rank(0, "X");
  if (r < 3) c.fail("input X must have rank >= 3 (N, C, spatial...), got rank " + std::to_string(r));
  if (r == 4) return {c.op(Code2d, {x})};
  ops::ReduceAttrs a;
  for (int64_t i = 2; i < r; ++i) a.axes.push_back(i);
  a.keepdims = true;
  return {c.op(Reduce, {x}, a)};
}

// BatchNormalization-14+ in training mode: normalise with the batch statistics and also return
// the updated running statistics (input * momentum + batch * (1 - momentum)).
Outs batch_norm_training(NodeContext& c, const ops::BatchNormAttrs& a) {
  ir::Expr x = c.input(0, "X");
  const Shape& xs = ir::shape_of(x);
  if (xs.size() < 2) c.fail("input X must have rank >= 2");
  DType dt = ir::dtype_of(x);
  ops::ReduceAttrs red;
  for (int64_t i = 0; i < static_cast<int64_t>(xs.size()); ++i)
    if (i != 1) red.axes.push_back(i);
  red.keepdims = false;
  ir::Expr mean = c.op(OpCode::ReduceMean, {x}, red);
  Shape bshape(xs.size(), 1);
  bshape[1] = xs[1];
  ir::Expr d = c.op(OpCode::Sub, {x, c.reshape(mean, bshape)});
  ir::Expr var = c.op(OpCode::ReduceMean, {c.op(OpCode::Mul, {d, d})}, red);
  ir::Expr y = c.op(OpCode::BatchNorm, {x, c.input(1, "scale"), c.input(2, "B"), mean, var}, a);
  double momentum = c.attr_float("momentum", 0.9);
  auto running = [&](const ir::Expr& old, const ir::Expr& batch) {
    return c.op(OpCode::Add, {c.op(OpCode::Mul, {old, NodeContext::scalar(dt, momentum)}),
                              c.op(OpCode::Mul, {batch, NodeContext::scalar(dt, 1 - momentum)})});
  };
  return {y, running(c.input(3, "input_mean"), mean), running(c.input(4, "input_var"), var)};
}

Outs convert_batch_norm(NodeContext& c) {
  if (c.opset() < 9 && c.attr_int("spatial", 1) != 1) {
    const Shape& s = c.shape(1, "scale");
    if (s.size() != 1) c.unsupported("BatchNormalization with spatial=0 and per-element statistics");
  }
  ops::BatchNormAttrs a;
  a.epsilon = c.attr_float("epsilon", 1e-5);
  if (c.opset() >= 14 && c.attr_int("training_mode", 0) != 0) return batch_norm_training(c, a);
  for (size_t i = 1; i < c.num_outputs(); ++i)
    if (c.output_used(i)) c.unsupported("BatchNormalization training outputs (running mean/var, saved mean/var)");
  return {c.op(OpCode::BatchNorm, {c.input(0, "X"), c.input(1, "scale"), c.input(2, "B"), c.input(3, "mean"),
                                   c.input(4, "var")}, a)};
}

// GroupNormalization-18: normalise each group of C/G channels of each sample; scale and bias are
// per group (opset 18's form).
Outs convert_group_norm(NodeContext& c) {
  ir::Expr x = c.input(0, "X");
  const Shape& xs = ir::shape_of(x);
  if (xs.size() < 3) c.fail("input X must have rank >= 3 (N, C, spatial...)");
  int64_t groups = c.attr_int("num_groups");
  if (groups <= 0 || xs[1] % groups != 0)
    c.fail("num_groups " + std::to_string(groups) + " does not divide the " + std::to_string(xs[1]) + " channels");
  double eps = c.attr_float("epsilon", 1e-5);
  DType dt = ir::dtype_of(x);
  ir::Expr g = c.reshape(x, {xs[0], groups, shape_numel(xs) / (xs[0] * groups)});
  ops::ReduceAttrs red;
  red.axes = {2};
  red.keepdims = true;
  ir::Expr mean = c.op(OpCode::ReduceMean, {g}, red);
  ir::Expr d = c.op(OpCode::Sub, {g, mean});
  ir::Expr var = c.op(OpCode::ReduceMean, {c.op(OpCode::Mul, {d, d})}, red);
  ir::Expr norm = c.op(OpCode::Div, {d, c.op(OpCode::Sqrt, {c.op(OpCode::Add, {var, NodeContext::scalar(dt, eps)})})});
  // (G) scale/bias -> (1, G, 1) against the grouped view.
  auto per_group = [&](size_t i, const char* role) {
    ir::Expr p = c.input(i, role);
    if (ir::shape_of(p) != Shape{groups}) c.fail(std::string(role) + " must have shape (" + std::to_string(groups) + ")");
    return c.reshape(p, {1, groups, 1});
  };
  ir::Expr y = c.op(OpCode::Add, {c.op(OpCode::Mul, {norm, per_group(1, "scale")}), per_group(2, "bias")});
  return {c.reshape(y, xs)};
}

// MeanVarianceNormalization as its ONNX function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9),
// the variance at least 0: over equal values E[X^2] - E[X]^2 rounds to either side of 0, and a
// rounding below it made sqrt NaN where the result is 0 (a path that summed in another order
// than the reference's gave NaN for a channel of equal values; differential suite, seed 47317).
Outs convert_mvn(NodeContext& c) {
  ir::Expr x = c.input(0, "X");
  int64_t r = c.rank(0, "X");
  ops::ReduceAttrs red;
  for (int64_t ax : c.attr_ints("axes", std::vector<int64_t>{0, 2, 3})) red.axes.push_back(c.axis(ax, r));
  std::sort(red.axes.begin(), red.axes.end());
  red.keepdims = true;
  DType dt = ir::dtype_of(x);
  ir::Expr mean = c.op(OpCode::ReduceMean, {x}, red);
  ir::Expr mean_sq = c.op(OpCode::ReduceMean, {c.op(OpCode::Mul, {x, x})}, red);
  ir::Expr var = c.op(OpCode::Maximum, {c.op(OpCode::Sub, {mean_sq, c.op(OpCode::Mul, {mean, mean})}),
                                        NodeContext::scalar(dt, 0.0)});
  ir::Expr std_eps = c.op(OpCode::Add, {c.op(OpCode::Sqrt, {var}), NodeContext::scalar(dt, 1e-9)});
  return {c.op(OpCode::Div, {c.op(OpCode::Sub, {x, mean}), std_eps})};
}

Outs convert_instance_norm(NodeContext& c) {
  ops::EpsilonAttrs a;
  a.epsilon = c.attr_float("epsilon", 1e-5);
  return {c.op(OpCode::InstanceNorm, {c.input(0, "input"), c.input(1, "scale"), c.input(2, "B")}, a)};
}

Outs convert_lrn(NodeContext& c) {
  ops::LRNAttrs a;
  a.size = c.attr_int("size");
  a.alpha = c.attr_float("alpha", 1e-4);
  a.beta = c.attr_float("beta", 0.75);
  a.bias = c.attr_float("bias", 1.0);
  return {c.op(OpCode::LRN, {c.input(0, "input")}, a)};
}

// LayerNormalization-17; its optional Mean and InvStdDev outputs are computed with reductions.
Outs convert_layer_norm(NodeContext& c) {
  ir::Expr x = c.input(0, "X");
  int64_t r = c.rank(0, "X");
  int64_t axis = c.axis(c.attr_int("axis", -1), r);
  double eps = c.attr_float("epsilon", 1e-5);
  if (c.attr_int("stash_type", 1) != 1) c.unsupported("LayerNormalization stash_type other than float32");
  const Shape& xs = ir::shape_of(x);
  Shape norm_shape(xs.begin() + axis, xs.end());
  auto fit = [&](ir::Expr p) {
    if (ir::shape_of(p) == norm_shape) return p;
    ops::ShapeAttrs b;
    b.shape = norm_shape;
    return c.op(OpCode::BroadcastTo, {p}, b);
  };
  std::vector<ir::Expr> args{x, fit(c.input(1, "Scale"))};
  if (c.has_input(2)) args.push_back(fit(c.input(2, "B")));
  ops::LayerNormAttrs a;
  a.axis = axis;
  a.epsilon = eps;
  Outs outs{c.op(OpCode::LayerNorm, args, a)};
  bool want_mean = c.num_outputs() > 1 && c.output_used(1);
  bool want_inv = c.num_outputs() > 2 && c.output_used(2);
  if (want_mean || want_inv) {
    ops::ReduceAttrs red;
    for (int64_t i = axis; i < r; ++i) red.axes.push_back(i);
    red.keepdims = true;
    ir::Expr mean = c.op(OpCode::ReduceMean, {x}, red);
    ir::Expr d = c.op(OpCode::Sub, {x, mean});
    ir::Expr var = c.op(OpCode::ReduceMean, {c.op(OpCode::Mul, {d, d})}, red);
    ir::Expr inv = c.op(OpCode::Reciprocal,
                        {c.op(OpCode::Sqrt, {c.op(OpCode::Add, {var, NodeContext::scalar(ir::dtype_of(x), eps)})})});
    outs.push_back(want_mean ? mean : nullptr);
    outs.push_back(want_inv ? inv : nullptr);
  }
  return outs;
}

// Softmax-family ops before opset 13 coerce the input to 2-D [prod(dims[:axis]), prod(dims[axis:])].
template <typename Body>
ir::Expr coerced_2d(NodeContext& c, const ir::Expr& x, int64_t axis, Body body) {
  const Shape& s = ir::shape_of(x);
  int64_t r = static_cast<int64_t>(s.size());
  if (axis == r - 1) return body(x, axis);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= s[static_cast<size_t>(i)];
  ir::Expr y = body(c.reshape(x, {outer, inner}), 1);
  return c.reshape(y, s);
}

template <OpCode Code>
Outs softmax_like(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  int64_t r = c.rank(0, "input");
  if (r == 0) c.fail("input must have rank >= 1");
  auto body = [&](const ir::Expr& v, int64_t axis) {
    ops::AxisAttrs a;
    a.axis = axis;
    return c.op(Code, {v}, a);
  };
  if (c.opset() >= 13) return {body(x, c.axis(c.attr_int("axis", -1), r))};
  return {coerced_2d(c, x, c.axis(c.attr_int("axis", 1), r), body)};
}

// Hardmax: one-hot of the (first) argmax along the axis.
Outs convert_hardmax(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  int64_t r = c.rank(0, "input");
  if (r == 0) c.fail("input must have rank >= 1");
  auto body = [&](const ir::Expr& v, int64_t axis) {
    ops::ArgReduceAttrs am;
    am.axis = axis;
    am.keepdims = false;
    ir::Expr idx = c.op(OpCode::ArgMax, {v}, am);
    DType dt = ir::dtype_of(v);
    Tensor values(dt, {2});
    dispatch_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      values.data<T>()[0] = static_cast<T>(0);
      values.data<T>()[1] = static_cast<T>(1);
    });
    ops::OneHotAttrs oh;
    oh.depth = ir::shape_of(v)[static_cast<size_t>(axis)];
    oh.axis = axis;
    return c.op(OpCode::OneHot, {idx, ir::constant(values)}, oh);
  };
  if (c.opset() >= 13) return {body(x, c.axis(c.attr_int("axis", -1), r))};
  return {coerced_2d(c, x, c.axis(c.attr_int("axis", 1), r), body)};
}

Outs convert_matmul(NodeContext& c) { return {c.op(OpCode::MatMul, {c.input(0, "A"), c.input(1, "B")})}; }

// Gemm: alpha * op(A) @ op(B) + beta * C, with nn.dense for transB (the usual weight layout).
Outs convert_gemm(NodeContext& c) {
  ir::Expr a = c.input(0, "A"), b = c.input(1, "B");
  if (c.rank(0, "A") != 2 || c.rank(1, "B") != 2) c.fail("inputs A and B must be matrices");
  double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  DType dt = ir::dtype_of(a);
  if (c.attr_int("transA", 0)) a = c.transpose(a, {1, 0});
  ir::Expr bias = c.optional_input(2);
  if (bias && beta == 0) bias = nullptr;
  bool trans_b = c.attr_int("transB", 0) != 0;
  int64_t n = ir::shape_of(b)[trans_b ? 0 : 1];
  ir::Expr y;
  if (trans_b) {
    bool fuse_bias = bias && alpha == 1 && beta == 1 && ir::shape_of(bias) == Shape{n};
    y = fuse_bias ? c.op(OpCode::Dense, {a, b, bias}) : c.op(OpCode::Dense, {a, b});
    if (fuse_bias) return {y};
  } else {
    y = c.op(OpCode::MatMul, {a, b});
  }
  if (alpha != 1) y = c.op(OpCode::Mul, {y, NodeContext::scalar(dt, alpha)});
  if (bias) {
    if (beta != 1) bias = c.op(OpCode::Mul, {bias, NodeContext::scalar(dt, beta)});
    y = c.op(OpCode::Add, {y, bias});
  }
  return {y};
}

Outs convert_pad(NodeContext& c) {
  ir::Expr x = c.input(0, "data");
  int64_t r = c.rank(0, "data");
  ops::PadAttrs a;
  a.mode = c.attr_string("mode", "constant");
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && a.mode != "wrap")
    c.fail("unknown mode '" + a.mode + "'");
  if (c.opset() < 11) {
    a.pads = c.attr_ints("pads");
    a.value = c.attr_float("value", 0.0);
  } else {
    std::vector<int64_t> pads = c.const_ints(1, "pads");
    if (auto v = c.optional_const_input(2, "constant_value")) {
      if (v->numel() != 1) c.fail("constant_value must be a scalar");
      a.value = v->get_as_double(0);
    }
    if (c.has_input(3)) {
      std::vector<int64_t> axes = c.const_ints(3, "axes");
      if (pads.size() != 2 * axes.size())
        c.fail("pads has " + std::to_string(pads.size()) + " values for " + std::to_string(axes.size()) + " axes");
      a.pads.assign(static_cast<size_t>(2 * r), 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t ax = c.axis(axes[i], r, "pad axis");
        a.pads[static_cast<size_t>(ax)] = pads[i];
        a.pads[static_cast<size_t>(ax + r)] = pads[axes.size() + i];
      }
    } else {
      a.pads = pads;
    }
  }
  if (static_cast<int64_t>(a.pads.size()) != 2 * r)
    c.fail("pads has " + std::to_string(a.pads.size()) + " values, expected " + std::to_string(2 * r) +
           " for an input of rank " + std::to_string(r));
  return {c.op(OpCode::Pad, {x}, a)};
}

Outs convert_depth_to_space(NodeContext& c) {
  ops::DepthToSpaceAttrs a;
  a.blocksize = c.attr_int("blocksize");
  a.mode = c.attr_string("mode", "DCR");
  if (a.mode != "DCR" && a.mode != "CRD") c.fail("unknown mode '" + a.mode + "'");
  return {c.op(OpCode::DepthToSpace, {c.input(0, "input")}, a)};
}

Outs convert_space_to_depth(NodeContext& c) {
  ops::BlockSizeAttrs a;
  a.blocksize = c.attr_int("blocksize");
  return {c.op(OpCode::SpaceToDepth, {c.input(0, "input")}, a)};
}

// Resize/Upsample of the two innermost axes of a 4-D tensor.
ir::Expr resize_4d(NodeContext& c, const ir::Expr& x, std::vector<double> scales, std::vector<int64_t> sizes,
                   ops::Resize2dAttrs a) {
  const Shape& xs = ir::shape_of(x);
  if (!sizes.empty()) {
    if (sizes.size() != 4) c.fail("sizes must have 4 values, got " + std::to_string(sizes.size()));
    if (sizes[0] != xs[0] || sizes[1] != xs[1]) c.unsupported("Resize of the batch or channel axis");
    a.size = {sizes[2], sizes[3]};
  } else {
    if (scales.size() != 4) c.fail("scales must have 4 values, got " + std::to_string(scales.size()));
    if (scales[0] != 1 || scales[1] != 1) c.unsupported("Resize of the batch or channel axis");
    for (int i = 2; i < 4; ++i) {
      double s = scales[static_cast<size_t>(i)];
      if (!(s > 0)) c.fail("scales must be positive");
      int64_t out = static_cast<int64_t>(std::floor(static_cast<double>(xs[static_cast<size_t>(i)]) * s));
      // ONNX maps coordinates with the given scale, which differs from the size ratio out/in
      // where in*scale is not an integer (PyTorch's interpolate(scale_factor=0.5) of an odd size).
      double ratio = static_cast<double>(out) / static_cast<double>(xs[static_cast<size_t>(i)]);
      if (ratio != s) {
        // align_corners divides by the resized length less 1: ONNX's reference takes in*scale,
        // ONNX Runtime and PyTorch the output's length. Refused rather than guessed.
        if (a.coordinate_transformation_mode == "align_corners")
          c.unsupported("Resize align_corners with scale " + std::to_string(s) + " that is not output/input size (" +
                        std::to_string(out) + "/" + std::to_string(xs[static_cast<size_t>(i)]) + ")");
        (i == 2 ? a.scale_h : a.scale_w) = s;
      }
      a.size.push_back(out);
    }
  }
  return c.op(OpCode::Resize2d, {x}, a);
}

// Resize of (N, C, spatial...) with 1, 2 or 3 spatial axes. Every mode is separable (ONNX
// interpolates one axis after another), so a 1-D resize is a 2-D one over a height of 1 (an
// identity: weight 1 on the row itself), and a 3-D one resizes each depth's planes, then the
// depths of the resized planes (a 2-D resize whose width, the planes, stays).
ir::Expr resize_2d(NodeContext& c, const ir::Expr& x, std::vector<double> scales, std::vector<int64_t> sizes,
                   ops::Resize2dAttrs a) {
  const Shape xs = ir::shape_of(x);
  const size_t r = xs.size();
  if (r < 3 || r > 5) c.unsupported("Resize of a rank-" + std::to_string(r) + " tensor (N, C and 1 to 3 spatial axes)");
  if (!sizes.empty() && sizes.size() != r)
    c.fail("sizes must have " + std::to_string(r) + " values, got " + std::to_string(sizes.size()));
  if (!scales.empty() && scales.size() != r)
    c.fail("scales must have " + std::to_string(r) + " values, got " + std::to_string(scales.size()));
  if (r == 4) return resize_4d(c, x, scales, sizes, a);
  if ((!sizes.empty() && (sizes[0] != xs[0] || sizes[1] != xs[1])) || (!scales.empty() && (scales[0] != 1 || scales[1] != 1)))
    c.unsupported("Resize of the batch or channel axis");
  // The values of the axes picked, as a 4-D resize's (N and C unchanged, a missing one 1).
  auto pick = [&](int64_t n, int64_t ch, int h, int w, int64_t size_h, int64_t size_w) {
    std::vector<double> sc;
    std::vector<int64_t> sz;
    if (!scales.empty()) sc = {1, 1, h < 0 ? 1.0 : scales[static_cast<size_t>(h)], w < 0 ? 1.0 : scales[static_cast<size_t>(w)]};
    else sz = {n, ch, size_h, size_w};
    return std::make_pair(sc, sz);
  };
  if (r == 3) {
    const int64_t L = xs[2];
    auto [sc, sz] = pick(xs[0], xs[1], -1, 2, 1, sizes.empty() ? 0 : sizes[2]);
    ir::Expr y = resize_4d(c, c.reshape(x, {xs[0], xs[1], 1, L}), sc, sz, a);
    const Shape& ys = ir::shape_of(y);
    return c.reshape(y, {xs[0], xs[1], ys[3]});
  }
  const int64_t N = xs[0], C = xs[1], D = xs[2];
  auto [sc1, sz1] = pick(N, C * D, 3, 4, sizes.empty() ? 0 : sizes[3], sizes.empty() ? 0 : sizes[4]);
  ir::Expr planes = resize_4d(c, c.reshape(x, {N, C * D, xs[3], xs[4]}), sc1, sz1, a);
  const Shape ps = ir::shape_of(planes);
  auto [sc2, sz2] = pick(N, C, 2, -1, sizes.empty() ? 0 : sizes[2], ps[2] * ps[3]);
  ir::Expr y = resize_4d(c, c.reshape(planes, {N, C, D, ps[2] * ps[3]}), sc2, sz2, a);
  return c.reshape(y, {N, C, ir::shape_of(y)[2], ps[2], ps[3]});
}

// GridSample-16 (4-D): data sampled at the grid's normalized (x, y) as PyTorch's grid_sample.
Outs convert_grid_sample(NodeContext& c) {
  ops::GridSampleAttrs a;
  a.mode = c.attr_string("mode", "bilinear");
  a.padding_mode = c.attr_string("padding_mode", "zeros");
  a.align_corners = c.attr_int("align_corners", 0) != 0;  // mode and padding_mode: the relation checks
  ir::Expr x = c.input(0, "X"), grid = c.input(1, "grid");
  if (ir::dtype_of(x) != ir::dtype_of(grid))
    c.unsupported("GridSample of " + std::string(dtype_name(ir::dtype_of(x))) + " data on a " +
                  std::string(dtype_name(ir::dtype_of(grid))) + " grid (the same float type only)");
  if (ir::shape_of(x).size() != 4) c.unsupported("GridSample of a rank-" + std::to_string(ir::shape_of(x).size()) + " input (only 4-D)");
  return {c.op(OpCode::GridSample, {x, grid}, a)};
}

// RoiAlign-10 (output_half_pixel coordinates) and -16 (coordinate_transformation_mode, half_pixel
// by default): torchvision's roi_align exports as either.
Outs convert_roi_align(NodeContext& c) {
  ops::RoiAlignAttrs a;
  a.mode = c.attr_string("mode", "avg");
  a.output_height = c.attr_int("output_height", 1);
  a.output_width = c.attr_int("output_width", 1);
  a.sampling_ratio = c.attr_int("sampling_ratio", 0);
  a.spatial_scale = c.attr_float("spatial_scale", 1.0);
  const std::string ctm = c.attr_string("coordinate_transformation_mode", c.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    c.fail("coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" + ctm + "'");
  a.half_pixel = ctm == "half_pixel";
  return {c.op(OpCode::RoiAlign, {c.input(0, "X"), c.input(1, "rois"), c.input(2, "batch_indices")}, a)};
}

// MaxRoiPool-1 (torchvision's roi_pool): rois carry their batch index in the first column.
Outs convert_max_roi_pool(NodeContext& c) {
  ops::MaxRoiPoolAttrs a;
  a.pooled_shape = c.attr_ints("pooled_shape");
  a.spatial_scale = c.attr_float("spatial_scale", 1.0);
  return {c.op(OpCode::MaxRoiPool, {c.input(0, "X"), c.input(1, "rois")}, a)};
}

std::vector<double> float_values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_as_double(i));
  return v;
}

std::string resize_mode(NodeContext& c) {
  std::string mode = c.attr_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample-7 spelling
  if (mode != "nearest" && mode != "linear" && mode != "cubic") c.fail("unknown mode '" + mode + "'");
  return mode;
}

// Upsample-7/9 and Resize-10: asymmetric coordinates, nearest rounds down.
Outs convert_upsample(NodeContext& c) {
  ops::Resize2dAttrs a;
  a.mode = resize_mode(c);
  if (a.mode == "cubic") c.fail("cubic mode needs Resize-11 or later");
  a.coordinate_transformation_mode = "asymmetric";
  a.nearest_mode = "floor";
  std::vector<double> scales;
  bool scales_attr = c.op_type() == "Upsample" && c.opset() < 9;
  if (scales_attr) scales = c.attr_floats("scales");
  else scales = float_values(c.const_input(1, "scales"));
  return {resize_2d(c, c.input(0, "X"), scales, {}, a)};
}

Outs convert_resize(NodeContext& c) {
  ops::Resize2dAttrs a;
  a.mode = resize_mode(c);
  a.coordinate_transformation_mode = c.attr_string("coordinate_transformation_mode", "half_pixel");
  a.nearest_mode = c.attr_string("nearest_mode", "round_prefer_floor");
  a.cubic_coeff_a = c.attr_float("cubic_coeff_a", -0.75);
  const std::string& ctm = a.coordinate_transformation_mode;
  if (ctm == "tf_crop_and_resize") c.unsupported("Resize coordinate_transformation_mode 'tf_crop_and_resize'");
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" && ctm != "align_corners" && ctm != "asymmetric" &&
      ctm != "tf_half_pixel_for_nn")
    c.fail("unknown coordinate_transformation_mode '" + ctm + "'");
  a.exclude_outside = c.attr_int("exclude_outside", 0) != 0 && a.mode != "nearest";
  if (c.attr_int("antialias", 0) != 0) c.unsupported("Resize with antialias=1");
  ir::Expr x = c.input(0, "X");
  int64_t r = c.rank(0, "X");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (auto s = c.optional_const_input(2, "scales"); s && s->numel() > 0) scales = float_values(*s);
  if (auto s = c.optional_const_input(3, "sizes"); s && s->numel() > 0) sizes = s->to_int_vector();
  if (scales.empty() == sizes.empty()) c.fail("exactly one of 'scales' and 'sizes' must be given");
  // Resize-18 axes: expand the per-axis values to all axes.
  if (c.has_attr("axes")) {
    std::vector<int64_t> axes = c.attr_ints("axes");
    std::vector<double> full_scales(static_cast<size_t>(r), 1.0);
    std::vector<int64_t> full_sizes(ir::shape_of(x));
    for (size_t i = 0; i < axes.size(); ++i) {
      auto ax = static_cast<size_t>(c.axis(axes[i], r));
      if (!scales.empty()) full_scales[ax] = scales.at(i);
      else full_sizes[ax] = sizes.at(i);
    }
    if (!scales.empty()) scales = full_scales;
    else sizes = full_sizes;
  }
  std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
  if (!sizes.empty() && policy != "stretch") {
    if (policy != "not_larger" && policy != "not_smaller") c.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
    const Shape& xs = ir::shape_of(x);
    double scale = policy == "not_larger" ? INFINITY : 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (sizes[i] == xs[i]) continue;
      double s = static_cast<double>(sizes[i]) / static_cast<double>(xs[i]);
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (size_t i = 0; i < xs.size(); ++i)
      if (sizes[i] != xs[i]) sizes[i] = static_cast<int64_t>(std::round(scale * static_cast<double>(xs[i])));
  }
  return {resize_2d(c, x, scales, sizes, a)};
}

}  // namespace

// Forms that changed before or at opset 7 in ways we do not read are registered from the version
// we do read (AveragePool-7 count_include_pad, BatchNormalization-7, Gemm-7, LpPool-2, Pad-2).
void register_nn_converters(ConverterTable& t) {
  t.add("Conv", 1, convert_conv);
  t.add("ConvTranspose", 1, convert_conv_transpose);
  t.add("MaxPool", 1, convert_max_pool);
  t.add("MaxUnpool", 9, convert_max_unpool);
  t.add("AveragePool", 7, convert_avg_pool);
  t.add("LpPool", 2, convert_lp_pool);
  t.add("GlobalAveragePool", 1, global_pool<OpCode::GlobalAvgPool2d, OpCode::ReduceMean>);
  t.add("GlobalMaxPool", 1, global_pool<OpCode::GlobalMaxPool2d, OpCode::ReduceMax>);
  t.add("BatchNormalization", 7, convert_batch_norm);
  t.add("InstanceNormalization", 1, convert_instance_norm);
  t.add("MeanVarianceNormalization", 9, convert_mvn);
  t.add("GroupNormalization", 18, convert_group_norm);
  t.add("LRN", 1, convert_lrn);
  t.add("LayerNormalization", 17, convert_layer_norm);
  t.add("Softmax", 1, softmax_like<OpCode::Softmax>);
  t.add("LogSoftmax", 1, softmax_like<OpCode::LogSoftmax>);
  t.add("Hardmax", 1, convert_hardmax);
  t.add("MatMul", 1, convert_matmul);
  t.add("Gemm", 7, convert_gemm);
  t.add("Pad", 2, convert_pad);
  t.add("DepthToSpace", 1, convert_depth_to_space);
  t.add("SpaceToDepth", 1, convert_space_to_depth);
  t.add("Upsample", 7, convert_upsample);
  t.add("Resize", 10, convert_upsample);
  t.add("Resize", 11, convert_resize);
  t.add("GridSample", 16, convert_grid_sample);
  t.add("RoiAlign", 10, convert_roi_align);
  t.add("MaxRoiPool", 1, convert_max_roi_pool);
}

}  // namespace sy::onnx
