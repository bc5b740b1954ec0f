// 3-D convolution and pooling (video models: R3D, R(2+1)D, S3D, MViT's patch embedding) as the
// 2-D ops over the depth taps, so that every native implementation, schedule and backend of the
// 2-D ops serves them:
//  - conv: the input transposed depth-first (N, D, C, H, W) and padded in depth; for each of the KD
//    depth taps, a 2-D conv of the N * D_out images that tap reads (a strided slice) by that tap's
//    2-D weight, the partial results summed (each sum in the next conv's epilogue). The taps
//    stacked as channels for one conv instead (sliced and concatenated): R(2+1)D-18 243 ms
//    against 223, R3D-18 206 against 214 (2 threads, Zen 4); gathered by one index table, slower
//    still (an index load per element);
//  - transposed conv: for each depth tap, a 2-D transposed conv of all N * D images by that tap's
//    2-D weight, its depths spread out by the stride and shifted by the tap, the taps summed and
//    the depth padding cut (3-D U-Nets and V-Nets upsample so);
//  - pool: the 2-D pool over the planes of every depth, then the depth window as a maximum or a
//    mean of slices (the count of an average pool is a product of a depth and a plane count).
#include <cmath>
#include <limits>

#include "frontends/onnx/converters.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// x (N, C, D, ...) padded by `begin` and `end` depths of `value`.
ir::Expr pad_depth(NodeContext& c, const ir::Expr& x, int64_t begin, int64_t end, double value) {
  if (begin == 0 && end == 0) return x;
  ops::PadAttrs a;
  a.pads = {0, 0, begin, 0, 0, 0, 0, end, 0, 0};
  a.value = value;
  return c.op(OpCode::Pad, {x}, a);
}

// The depths tap, tap + stride, ... (count of them) of x (N, C, D, H, W).
ir::Expr depth_tap(NodeContext& c, const ir::Expr& x, int64_t first, int64_t stride, int64_t count) {
  const Shape& s = ir::shape_of(x);
  ops::StridedSliceAttrs a;
  a.begin = {0, 0, first, 0, 0};
  a.end = {s[0], s[1], first + (count - 1) * stride + 1, s[3], s[4]};
  a.strides = {1, 1, stride, 1, 1};
  return c.op(OpCode::StridedSlice, {x}, a);
}

// The 2-D weight (A, B, KH, KW) of depth tap kd of a 3-D weight (A, B, KD, KH, KW).
ir::Expr weight_tap(NodeContext& c, const ir::Expr& w, int64_t kd) {
  const Shape& ws = ir::shape_of(w);
  ops::StridedSliceAttrs a;
  a.begin = {0, 0, kd, 0, 0};
  a.end = {ws[0], ws[1], kd + 1, ws[3], ws[4]};
  a.strides = {1, 1, 1, 1, 1};
  return c.reshape(c.op(OpCode::StridedSlice, {w}, a), {ws[0], ws[1], ws[3], ws[4]});
}

}  // namespace

ir::Expr build_conv3d(NodeContext& c, const ir::Expr& x, const ir::Expr& w, const ir::Expr& bias) {
  const Shape xs = ir::shape_of(x), ws = ir::shape_of(w);
  if (ws.size() != 5) c.fail("weight rank " + std::to_string(ws.size()) + " does not match input rank 5");
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != kernel) c.fail("kernel_shape does not match the weight's");
  const SpatialWindow win = resolve_spatial(c, Shape(xs.begin() + 2, xs.end()), kernel);
  const int64_t N = xs[0], C = xs[1], D = xs[2], H = xs[3], W = xs[4], O = ws[0], Cg = ws[1], KD = ws[2];
  const int64_t G = c.attr_int("group", 1);
  if (G <= 0 || C % G != 0 || O % G != 0 || C / G != Cg)
    c.fail("groups " + std::to_string(G) + " do not divide the input's " + std::to_string(C) + " and the weight's " +
           std::to_string(O) + " x " + std::to_string(Cg) + " channels");
  const int64_t sd = win.strides[0], dd = win.dilations[0];
  const int64_t Do = (D + win.begin[0] + win.end[0] - ((KD - 1) * dd + 1)) / sd + 1;
  if (Do < 1) c.fail("the depth kernel " + std::to_string(KD) + " is longer than the padded depth");
  // Depth outermost first (N, D, C, H, W): a tap's images are then a slice of whole (C, H, W)
  // images, N * D_out images of a 2-D conv.
  ir::Expr xt = c.transpose(x, {0, 2, 1, 3, 4});
  if (win.begin[0] != 0 || win.end[0] != 0) {
    ops::PadAttrs pad;
    pad.pads = {0, win.begin[0], 0, 0, 0, 0, win.end[0], 0, 0, 0};
    xt = c.op(OpCode::Pad, {xt}, pad);
  }
  ops::Conv2dAttrs a;
  a.strides = {win.strides[1], win.strides[2]};
  a.dilation = {win.dilations[1], win.dilations[2]};
  a.padding = {win.begin[1], win.begin[2], win.end[1], win.end[2]};
  a.groups = G;
  ir::Expr y;
  for (int64_t kd = 0; kd < KD; ++kd) {
    ops::StridedSliceAttrs sl;
    sl.begin = {0, kd * dd, 0, 0, 0};
    sl.end = {N, kd * dd + (Do - 1) * sd + 1, C, H, W};
    sl.strides = {1, sd, 1, 1, 1};
    ir::Expr tap = c.reshape(c.op(OpCode::StridedSlice, {xt}, sl), {N * Do, C, H, W});
    ir::Expr w_kd = weight_tap(c, w, kd);
    ir::Expr part = bias && kd == 0 ? c.op(OpCode::Conv2d, {tap, w_kd, bias}, a) : c.op(OpCode::Conv2d, {tap, w_kd}, a);
    y = kd == 0 ? part : c.op(OpCode::Add, {part, y});
  }
  const Shape& ys = ir::shape_of(y);
  return c.transpose(c.reshape(y, {N, Do, O, ys[2], ys[3]}), {0, 2, 1, 3, 4});
}

ir::Expr build_conv_transpose3d(NodeContext& c, const ir::Expr& x, const ir::Expr& w, const ir::Expr& bias,
                                const TransposedWindow& win) {
  const Shape xs = ir::shape_of(x), ws = ir::shape_of(w);
  const int64_t N = xs[0], C = xs[1], D = xs[2], G = win.groups;
  if (ws.size() != 5) c.fail("weight rank " + std::to_string(ws.size()) + " does not match input rank 5");
  if (G <= 0 || C % G != 0 || ws[0] != C)
    c.fail("groups " + std::to_string(G) + " do not divide the input's " + std::to_string(C) + " channels of the weight's " +
           std::to_string(ws[0]));
  const int64_t O = ws[1] * G, KD = ws[2], sd = win.strides[0], dd = win.dilations[0];
  // Every depth the taps write, before the padding is cut.
  const int64_t full = (D - 1) * sd + (KD - 1) * dd + 1 + win.output_padding[0];
  const int64_t Do = full - win.begin[0] - win.end[0];
  if (Do < 1) c.fail("the padding leaves no output depth");
  ops::ConvTranspose2dAttrs a;
  a.strides = {win.strides[1], win.strides[2]};
  a.dilation = {win.dilations[1], win.dilations[2]};
  a.output_padding = {win.output_padding[1], win.output_padding[2]};
  a.padding = {win.begin[1], win.begin[2], win.end[1], win.end[2]};
  a.groups = G;
  const ir::Expr images = c.reshape(c.transpose(x, {0, 2, 1, 3, 4}), {N * D, C, xs[3], xs[4]});
  ir::Expr sum;
  int64_t plane = 0, Ho = 0, Wo = 0;
  for (int64_t kd = 0; kd < KD; ++kd) {
    ir::Expr w_kd = weight_tap(c, w, kd);
    ir::Expr z = c.op(OpCode::ConvTranspose2d, {images, w_kd}, a);  // (N * D, O, Ho, Wo)
    const Shape& zs = ir::shape_of(z);
    Ho = zs[2], Wo = zs[3], plane = O * Ho * Wo;
    // Input depth i lands on i * sd + kd * dd: spread by the stride (zeros between), then shifted.
    ir::Expr spread = c.reshape(z, {N, D, 1, plane});
    if (sd > 1) {
      ops::PadAttrs gap;
      gap.pads = {0, 0, 0, 0, 0, 0, sd - 1, 0};
      spread = c.op(OpCode::Pad, {spread}, gap);
    }
    spread = c.reshape(spread, {N, D * sd, plane});
    ops::PadAttrs shift;
    shift.pads = {0, kd * dd, 0, 0, full - kd * dd - D * sd, 0};  // negative: cuts the last gap
    ir::Expr placed = c.op(OpCode::Pad, {spread}, shift);
    sum = sum ? c.op(OpCode::Add, {sum, placed}) : placed;
  }
  ops::StridedSliceAttrs crop;
  crop.begin = {0, win.begin[0], 0};
  crop.end = {N, win.begin[0] + Do, plane};
  crop.strides = {1, 1, 1};
  ir::Expr y = c.transpose(c.reshape(c.op(OpCode::StridedSlice, {sum}, crop), {N, Do, O, Ho, Wo}), {0, 2, 1, 3, 4});
  if (bias) y = c.op(OpCode::Add, {y, c.reshape(bias, {1, O, 1, 1, 1})});
  return y;
}

ir::Expr build_pool3d(NodeContext& c, const ir::Expr& x, OpCode pool2d) {
  const Shape xs = ir::shape_of(x);
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != 3) c.fail("kernel_shape must have 3 values for a 3-D pool");
  const SpatialWindow win = resolve_spatial(c, Shape(xs.begin() + 2, xs.end()), kernel);
  const int64_t N = xs[0], C = xs[1], D = xs[2];
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  const bool include_pad = pool2d == OpCode::AvgPool2d && c.attr_int("count_include_pad", 0) != 0;
  // The planes first (the depth window then reads the pooled, smaller planes).
  ops::Pool2dAttrs a;
  a.kernel = {kernel[1], kernel[2]};
  a.strides = {win.strides[1], win.strides[2]};
  a.dilation = {win.dilations[1], win.dilations[2]};
  a.padding = {win.begin[1], win.begin[2], win.end[1], win.end[2]};
  a.ceil_mode = ceil_mode;
  a.count_include_pad = include_pad;
  ir::Expr planes = c.op(pool2d, {c.reshape(x, {N, C * D, xs[3], xs[4]})}, a);
  const Shape& ps = ir::shape_of(planes);
  planes = c.reshape(planes, {N, C, D, ps[2], ps[3]});

  const int64_t KD = kernel[0], sd = win.strides[0], dd = win.dilations[0], b = win.begin[0], e = win.end[0];
  const int64_t eff = (KD - 1) * dd + 1, span = D + b + e - eff;
  if (span < 0) c.fail("the depth window " + std::to_string(KD) + " is longer than the padded depth");
  int64_t Do = (ceil_mode ? ceil_div(span, sd) : span / sd) + 1;
  if (ceil_mode && (Do - 1) * sd >= D + b) --Do;  // the last window starts in the input or its begin padding
  const int64_t extra = std::max<int64_t>(0, (Do - 1) * sd + eff - (D + b + e));
  const bool max = pool2d == OpCode::MaxPool2d;
  const ir::Expr padded = pad_depth(c, planes, b, e + extra, max ? -std::numeric_limits<double>::infinity() : 0.0);
  ir::Expr out = depth_tap(c, padded, 0, sd, Do);
  for (int64_t kd = 1; kd < KD; ++kd)
    out = c.op(max ? OpCode::Maximum : OpCode::Add, {out, depth_tap(c, padded, kd * dd, sd, Do)});
  if (max) return out;
  // The mean over the depth taps that count: in the input, or (count_include_pad) in its padding.
  Tensor inv(ir::dtype_of(x), {1, 1, Do, 1, 1});
  for (int64_t o = 0; o < Do; ++o) {
    int64_t n = 0;
    for (int64_t kd = 0; kd < KD; ++kd) {
      const int64_t at = o * sd + kd * dd;
      n += include_pad ? at < D + b + e : (at >= b && at < b + D);
    }
    dispatch_dtype(inv.dtype(), [&](auto tag) {
      using T = decltype(tag);
      inv.data<T>()[o] = static_cast<T>(n > 0 ? 1.0 / static_cast<double>(n) : 0.0);
    });
  }
  return c.op(OpCode::Mul, {out, ir::constant(inv)});
}

}  // namespace sy::onnx
