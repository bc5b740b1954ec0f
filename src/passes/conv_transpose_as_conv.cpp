// A transposed convolution as one ordinary convolution of its phases (see conv_transpose_as_conv.h).
#include "passes/conv_transpose_as_conv.h"

#include <algorithm>

#include "ops/attrs.h"
#include "ops/op.h"

namespace sy::passes {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The phases' weight: out channel ((og * sh + rh) * sw + rw), tap (mh, mw) is the transposed
// weight's tap (rh + (Jh - 1 - mh) * sh, rw + (Jw - 1 - mw) * sw) of output og, zero past its
// kernel. The taps run backwards because phase r's output q reads inputs q - j for j = 0..J-1.
Tensor phase_weight(const Tensor& w, int64_t G, int64_t sh, int64_t sw, int64_t Jh, int64_t Jw) {
  const Shape& ws = w.shape();  // (C, Og, KH, KW)
  const int64_t C = ws[0], Og = ws[1], KH = ws[2], KW = ws[3], Cg = C / G;
  Tensor v = Tensor::uninitialized(DType::f32, {G * Og * sh * sw, Cg, Jh, Jw});
  const float* src = w.data<float>();
  float* dst = v.data<float>();
  std::fill(dst, dst + v.numel(), 0.0f);
  for (int64_t og = 0; og < G * Og; ++og)
    for (int64_t rh = 0; rh < sh; ++rh)
      for (int64_t rw = 0; rw < sw; ++rw)
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t mh = 0; mh < Jh; ++mh)
            for (int64_t mw = 0; mw < Jw; ++mw) {
              const int64_t kh = rh + (Jh - 1 - mh) * sh, kw = rw + (Jw - 1 - mw) * sw;
              if (kh >= KH || kw >= KW) continue;
              const int64_t oc = (og * sh + rh) * sw + rw;
              dst[((oc * Cg + c) * Jh + mh) * Jw + mw] =
                  src[(((og / Og) * Cg + c) * Og + og % Og) * KH * KW + kh * KW + kw];
            }
  return v;
}

// Each output channel's bias repeated for its s_h * s_w phases.
Tensor phase_bias(const Tensor& b, int64_t phases) {
  Tensor v = Tensor::uninitialized(DType::f32, {b.numel() * phases});
  for (int64_t i = 0; i < v.numel(); ++i) v.data<float>()[i] = b.data<float>()[i / phases];
  return v;
}

}  // namespace

ir::Expr conv_transpose_as_conv(const ir::CallNode& c, const std::vector<ir::Expr>& args) {
  if (args.size() < 2 || !ir::is_tensor(args[0]->type) || !ir::is_tensor(c.type)) return nullptr;
  auto* wk = args[1]->as<ir::ConstantNode>();
  const ir::ConstantNode* bk = args.size() > 2 ? args[2]->as<ir::ConstantNode>() : nullptr;
  if (!wk || wk->value.ndim() != 4 || wk->value.dtype() != DType::f32) return nullptr;
  const ir::TypeNode& xt = ir::as_tensor(args[0]->type);
  const Shape& ys = ir::as_tensor(c.type).shape;
  if (xt.dtype != DType::f32 || xt.shape.size() != 4 || ys.size() != 4) return nullptr;
  const auto& a = c.attrs_as<ops::ConvTranspose2dAttrs>();
  if (a.strides.size() != 2 || a.padding.size() != 4 || a.output_padding.size() != 2 || a.dilation != std::vector<int64_t>{1, 1})
    return nullptr;
  const Shape& ws = wk->value.shape();
  const int64_t N = xt.shape[0], H = xt.shape[2], W = xt.shape[3], G = a.groups;
  const int64_t sh = a.strides[0], sw = a.strides[1], Jh = ceil_div(ws[2], sh), Jw = ceil_div(ws[3], sw);
  const int64_t O = ws[1] * G, pt = a.padding[0], pl = a.padding[1];
  // Full rows t = oy + pt run to (H - 1) * s + K + output_padding - pad_end; the phases cover
  // (H + J - 1) * s of them, one more input row of zeros where output_padding reaches past that.
  const int64_t eh = std::max<int64_t>(0, ceil_div(ws[2] + a.output_padding[0] - a.padding[2] - Jh * sh, sh));
  const int64_t ew = std::max<int64_t>(0, ceil_div(ws[3] + a.output_padding[1] - a.padding[3] - Jw * sw, sw));
  const int64_t Qh = H + Jh - 1 + eh, Qw = W + Jw - 1 + ew;

  auto conv = std::make_shared<ops::Conv2dAttrs>();
  conv->padding = {Jh - 1, Jw - 1, Jh - 1 + eh, Jw - 1 + ew};
  conv->groups = G;
  std::vector<ir::Expr> cargs = {args[0], ir::constant(phase_weight(wk->value, G, sh, sw, Jh, Jw))};
  if (bk) cargs.push_back(ir::constant(phase_bias(bk->value, sh * sw)));
  ir::Expr out = ir::call(ops::OpCode::Conv2d, cargs, conv);
  if (sh * sw > 1) {
    auto split = std::make_shared<ops::ReshapeAttrs>();
    split->newshape = {N, O, sh, sw, Qh, Qw};
    auto interleave = std::make_shared<ops::TransposeAttrs>();
    interleave->perm = {0, 1, 4, 2, 5, 3};
    auto join = std::make_shared<ops::ReshapeAttrs>();
    join->newshape = {N, O, Qh * sh, Qw * sw};
    out = ir::call(ops::OpCode::Reshape, {out}, split);
    out = ir::call(ops::OpCode::Transpose, {out}, interleave);
    out = ir::call(ops::OpCode::Reshape, {out}, join);
  }
  if (pt != 0 || pl != 0 || ys[2] != Qh * sh || ys[3] != Qw * sw) {
    auto crop = std::make_shared<ops::StridedSliceAttrs>();
    crop->begin = {0, 0, pt, pl};
    crop->end = {N, O, pt + ys[2], pl + ys[3]};
    crop->strides = {1, 1, 1, 1};
    out = ir::call(ops::OpCode::StridedSlice, {out}, crop);
  }
  // A computed bias cannot be repeated per phase ahead of time: it is added to the cropped output.
  if (args.size() > 2 && !bk) {
    auto channels = std::make_shared<ops::ReshapeAttrs>();
    channels->newshape = {1, O, 1, 1};
    out = ir::call(ops::OpCode::Add, {out, ir::call(ops::OpCode::Reshape, {args[2]}, channels)});
  }
  return ir::type_equal(out->type, c.type) ? out : nullptr;
}

}  // namespace sy::passes
