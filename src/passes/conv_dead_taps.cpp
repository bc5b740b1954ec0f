#include "passes/conv_dead_taps.h"

#include <algorithm>
#include <cstring>

#include "ops/attrs.h"
#include "ops/op.h"

namespace sy::passes {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The taps [first, last] of one axis that read some input element (tap k of output o reads input
// o * stride + k * dilation - pad), as the reference's valid ranges; false when none does or they
// are not one run.
bool live_taps(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dilation, int64_t pad, int64_t& first,
               int64_t& last) {
  first = last = -1;
  for (int64_t k = 0; k < taps; ++k) {
    const int64_t shift = k * dilation - pad;
    const int64_t lo = std::max<int64_t>(0, -floor_div(shift, stride));
    const int64_t hi = std::min<int64_t>(out, floor_div(in - 1 - shift, stride) + 1);
    if (lo >= hi) continue;
    if (first >= 0 && last != k - 1) return false;
    if (first < 0) first = k;
    last = k;
  }
  return first >= 0;
}

}  // namespace

ir::Expr conv_without_dead_taps(const ir::CallNode& c, const std::vector<ir::Expr>& args) {
  if (args.size() < 2 || !ir::is_tensor(args[0]->type) || !ir::is_tensor(c.type)) return nullptr;
  auto* wk = args[1]->as<ir::ConstantNode>();
  if (!wk || wk->value.ndim() != 4) return nullptr;
  const auto& a = c.attrs_as<ops::Conv2dAttrs>();
  if (a.strides.size() != 2 || a.padding.size() != 4 || a.dilation.size() != 2) return nullptr;
  const Shape& xs = ir::as_tensor(args[0]->type).shape;
  const Shape& ys = ir::as_tensor(c.type).shape;
  const Shape& ws = wk->value.shape();
  if (xs.size() != 4 || ys.size() != 4) return nullptr;
  int64_t h0, h1, w0, w1;
  if (!live_taps(xs[2], ys[2], ws[2], a.strides[0], a.dilation[0], a.padding[0], h0, h1) ||
      !live_taps(xs[3], ys[3], ws[3], a.strides[1], a.dilation[1], a.padding[1], w0, w1))
    return nullptr;
  const int64_t KH = h1 - h0 + 1, KW = w1 - w0 + 1;
  if (KH == ws[2] && KW == ws[3]) return nullptr;
  auto cut = std::make_shared<ops::Conv2dAttrs>(a);
  cut->padding = {a.padding[0] - h0 * a.dilation[0], a.padding[1] - w0 * a.dilation[1],
                  a.padding[2] - (ws[2] - 1 - h1) * a.dilation[0], a.padding[3] - (ws[3] - 1 - w1) * a.dilation[1]};
  for (int64_t p : cut->padding)
    if (p < 0) return nullptr;
  const Tensor& w = wk->value;
  Tensor kept = Tensor::uninitialized(w.dtype(), {ws[0], ws[1], KH, KW});
  const size_t e = dtype_size(w.dtype());
  const auto* src = static_cast<const uint8_t*>(w.raw());
  auto* dst = static_cast<uint8_t*>(kept.raw());
  for (int64_t oc = 0; oc < ws[0] * ws[1]; ++oc)
    for (int64_t kh = 0; kh < KH; ++kh)
      std::memcpy(dst + static_cast<size_t>((oc * KH + kh) * KW) * e,
                  src + static_cast<size_t>((oc * ws[2] + h0 + kh) * ws[3] + w0) * e, static_cast<size_t>(KW) * e);
  std::vector<ir::Expr> cargs = args;
  cargs[1] = ir::constant(std::move(kept));
  ir::Expr out = ir::call(ops::OpCode::Conv2d, cargs, cut);
  return ir::type_equal(out->type, c.type) ? out : nullptr;
}

}  // namespace sy::passes
