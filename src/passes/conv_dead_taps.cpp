// Dropping the conv taps that read only padding (see conv_dead_taps.h).
#include "passes/conv_dead_taps.h"

#include <algorithm>
#include <cstring>

#include "ops/attrs.h"
#include "ops/op.h"

namespace sy::passes {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The outputs [lo, hi) of one axis for which tap k reads the input (tap k of output o reads input
// o * stride + k * dilation - pad), as the reference executor's valid ranges; lo == hi: none.
void tap_outputs(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t pad, int64_t& lo,
                 int64_t& hi) {
  const int64_t shift = k * dilation - pad;
  lo = std::min(out, std::max<int64_t>(0, -floor_div(shift, stride)));
  hi = std::max(lo, std::min<int64_t>(out, floor_div(in - 1 - shift, stride) + 1));
}

// The taps [first, last] of one axis that read some input element; false when none does or they
// are not one run.
bool live_taps(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dilation, int64_t pad, int64_t& first,
               int64_t& last) {
  first = last = -1;
  for (int64_t k = 0; k < taps; ++k) {
    int64_t lo, hi;
    tap_outputs(in, out, k, stride, dilation, pad, lo, hi);
    if (lo >= hi) continue;
    if (first >= 0 && last != k - 1) return false;
    if (first < 0) first = k;
    last = k;
  }
  return first >= 0;
}

// The weight's taps [h0, h0 + KH) x [w0, w0 + KW).
Tensor weight_taps(const Tensor& w, int64_t h0, int64_t KH, int64_t w0, int64_t KW) {
  const Shape& ws = w.shape();
  Tensor kept = Tensor::uninitialized(w.dtype(), {ws[0], ws[1], KH, KW});
  const size_t e = dtype_size(w.dtype());
  const auto* src = static_cast<const uint8_t*>(w.raw());
  auto* dst = static_cast<uint8_t*>(kept.raw());
  for (int64_t oc = 0; oc < ws[0] * ws[1]; ++oc)
    for (int64_t kh = 0; kh < KH; ++kh)
      std::memcpy(dst + static_cast<size_t>((oc * KH + kh) * KW) * e,
                  src + static_cast<size_t>((oc * ws[2] + h0 + kh) * ws[3] + w0) * e, static_cast<size_t>(KW) * e);
  return kept;
}

// A run of outputs [o0, o1) of one axis that the same taps [k0, k1] read the input for, every
// one of them in bounds.
struct Segment {
  int64_t o0, o1, k0, k1;
};

// The axis cut where a tap starts or stops reading the input; empty when some run of outputs
// reads no input at all (only the bias) or its taps are not one run.
std::vector<Segment> segments(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dilation, int64_t pad) {
  std::vector<int64_t> lo(static_cast<size_t>(taps)), hi(lo.size()), cuts = {0, out};
  for (int64_t k = 0; k < taps; ++k) {
    const size_t i = static_cast<size_t>(k);
    tap_outputs(in, out, k, stride, dilation, pad, lo[i], hi[i]);
    cuts.push_back(lo[i]);
    cuts.push_back(hi[i]);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Segment> segs;
  for (size_t j = 0; j + 1 < cuts.size(); ++j) {
    Segment sg{cuts[j], cuts[j + 1], -1, -1};
    for (int64_t k = 0; k < taps; ++k) {
      const size_t i = static_cast<size_t>(k);
      if (lo[i] > sg.o0 || hi[i] < sg.o1) continue;
      if (sg.k0 >= 0 && sg.k1 != k - 1) return {};
      if (sg.k0 < 0) sg.k0 = k;
      sg.k1 = k;
    }
    if (sg.k0 < 0) return {};
    segs.push_back(sg);
  }
  return segs;
}

// Multiply-adds per output channel and input channel over an axis's segments.
int64_t axis_work(const std::vector<Segment>& segs) {
  int64_t n = 0;
  for (const Segment& s : segs) n += (s.o1 - s.o0) * (s.k1 - s.k0 + 1);
  return n;
}

// The conv as one conv per region of the output whose live taps are the same (no padding, reading
// a slice of the input), the regions joined by concatenations: where most of the taps of most
// outputs read padding, e.g. DeepLabV3's rate-12 3x3 conv on a 14x14 map (a tap off the centre
// reads the input for 2 of the 14 rows; 18% of the multiply-adds are real). nullptr when that
// is more than a third of the work and some region has fewer than 16 outputs (a 3x3 conv on a
// 2x2 map does 44% and stays whole: four one-pixel convs would cost more in calls), when it is
// more than 60% (DeepLabV3-ResNet-50's rate-12 conv on 28x28, 2048 channels, does 51% in
// regions of 4x4 to 12x12 outputs: 53.6 ms whole, the model 262 -> 226 ms by regions, 2
// threads), or when it would take more than 9 regions.
ir::Expr conv_by_regions(const ir::CallNode& c, const std::vector<ir::Expr>& args, const Tensor& w) {
  const auto& a = c.attrs_as<ops::Conv2dAttrs>();
  const Shape& xs = ir::as_tensor(args[0]->type).shape;
  const Shape& ys = ir::as_tensor(c.type).shape;
  const Shape& ws = w.shape();
  const std::vector<Segment> rows = segments(xs[2], ys[2], ws[2], a.strides[0], a.dilation[0], a.padding[0]);
  const std::vector<Segment> cols = segments(xs[3], ys[3], ws[3], a.strides[1], a.dilation[1], a.padding[1]);
  if (rows.empty() || cols.empty() || rows.size() * cols.size() > 9) return nullptr;
  const int64_t live = axis_work(rows) * axis_work(cols), all = ys[2] * ws[2] * ys[3] * ws[3];
  int64_t smallest = ys[2] * ys[3];
  for (const Segment& r : rows)
    for (const Segment& q : cols) smallest = std::min(smallest, (r.o1 - r.o0) * (q.o1 - q.o0));
  if (5 * live > 3 * all || (3 * live > all && smallest < 16)) return nullptr;
  auto axis = [](int64_t v) {
    auto at = std::make_shared<ops::AxisAttrs>();
    at->axis = v;
    return at;
  };
  std::vector<ir::Expr> bands;
  for (const Segment& r : rows) {
    std::vector<ir::Expr> pieces;
    for (const Segment& q : cols) {
      const int64_t r0 = r.o0 * a.strides[0] - a.padding[0] + r.k0 * a.dilation[0];
      const int64_t r1 = (r.o1 - 1) * a.strides[0] - a.padding[0] + r.k1 * a.dilation[0] + 1;
      const int64_t c0 = q.o0 * a.strides[1] - a.padding[1] + q.k0 * a.dilation[1];
      const int64_t c1 = (q.o1 - 1) * a.strides[1] - a.padding[1] + q.k1 * a.dilation[1] + 1;
      ir::Expr x = args[0];
      if (r0 != 0 || c0 != 0 || r1 != xs[2] || c1 != xs[3]) {
        auto sl = std::make_shared<ops::StridedSliceAttrs>();
        sl->begin = {0, 0, r0, c0};
        sl->end = {xs[0], xs[1], r1, c1};
        sl->strides = {1, 1, 1, 1};
        x = ir::call(ops::OpCode::StridedSlice, {x}, sl);
      }
      auto region = std::make_shared<ops::Conv2dAttrs>(a);
      region->padding = {0, 0, 0, 0};
      std::vector<ir::Expr> cargs = args;
      cargs[0] = x;
      cargs[1] = ir::constant(weight_taps(w, r.k0, r.k1 - r.k0 + 1, q.k0, q.k1 - q.k0 + 1));
      pieces.push_back(ir::call(ops::OpCode::Conv2d, cargs, region));
    }
    bands.push_back(pieces.size() == 1 ? pieces[0] : ir::call(ops::OpCode::Concat, pieces, axis(3)));
  }
  ir::Expr out = bands.size() == 1 ? bands[0] : ir::call(ops::OpCode::Concat, bands, axis(2));
  return ir::type_equal(out->type, c.type) ? out : nullptr;
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
  if (ir::Expr regions = conv_by_regions(c, args, wk->value)) return regions;
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
  std::vector<ir::Expr> cargs = args;
  cargs[1] = ir::constant(weight_taps(wk->value, h0, KH, w0, KW));
  ir::Expr out = ir::call(ops::OpCode::Conv2d, cargs, cut);
  return ir::type_equal(out->type, c.type) ? out : nullptr;
}

}  // namespace sy::passes
