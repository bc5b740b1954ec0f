// Native compute of image.grid_sample: the reference's formulas (backends/reference/
// kernels_image.cpp, after PyTorch's grid_sampler_2d) as f64 index arithmetic, each tap a gather
// at a clamped index, 0 where the tap is outside the image. Injective: schedule_injective.
#include "ops/op.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

Expr unnormalize(Expr c, int64_t size, bool align) {
  const double s = static_cast<double>(size);
  return align ? (c + 1.0) / 2.0 * dconst(s - 1) : ((c + 1.0) * dconst(s) - 1.0) / 2.0;
}

Expr clip(Expr c, int64_t size) { return tir::min(tir::max(c, dconst(0.0)), dconst(static_cast<double>(size - 1))); }

Expr reflect(Expr c, double twice_low, double twice_high) {
  if (twice_low == twice_high) return dconst(0.0);
  const double mn = twice_low / 2, span = (twice_high - twice_low) / 2;
  Expr a = dcall("fabs", c - mn);
  Expr flips = dcall("floor", a / span);
  Expr extra = a - flips * span;
  Expr even = tir::eq(flips - dcall("floor", flips / 2.0) * 2.0, dconst(0.0));
  return tir::select(even, extra + mn, (extra * -1.0 + span) + mn);
}

Expr pad(Expr c, int64_t size, const ops::GridSampleAttrs& a) {
  if (a.padding_mode == "border") return clip(c, size);
  if (a.padding_mode == "reflection") {
    const double s = static_cast<double>(size);
    return clip(a.align_corners ? reflect(c, 0, 2 * (s - 1)) : reflect(c, -1, 2 * s - 1), size);
  }
  return c;
}

// The index of an integer-valued coordinate, clamped to [-2, size + 1] first (NaN: -2) so that the
// conversion is defined and an index out of the image stays out.
Expr index(Expr c, int64_t size) {
  return tir::cast(DType::i64, tir::min(tir::max(c, dconst(-2.0)), dconst(static_cast<double>(size + 1))));
}

Expr cubic1(Expr x, double A) { return ((x * (A + 2)) - (A + 3)) * x * x + 1.0; }
Expr cubic2(Expr x, double A) { return ((x * A - 5 * A) * x + 8 * A) * x - 4 * A; }

std::vector<Tensor> grid_sample(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::GridSampleAttrs>();
  const Tensor &x = in.at(0), &grid = in.at(1);
  if (!is_float_dtype(x.dtype())) throw Error("image.grid_sample: needs float data");
  const int64_t H = x.shape()[2], W = x.shape()[3];
  return {te::compute(out_shape(c), [&](Expr n, Expr ch, Expr oh, Expr ow) {
    Expr gx = f64(grid(n, oh, ow, idx(0))), gy = f64(grid(n, oh, ow, idx(1)));
    // The value at integer-valued coordinates, 0 outside the image.
    auto at = [&](Expr yc, Expr xc) {
      Expr yi = index(yc, H), xi = index(xc, W);
      Expr inside = all_of({yi >= 0, yi < H, xi >= 0, xi < W});
      return tir::select(inside, f64(x(n, ch, clamp(yi, 0, H - 1), clamp(xi, 0, W - 1))), dconst(0.0));
    };
    Expr v;
    if (a.mode == "bicubic") {
      Expr ix = unnormalize(gx, W, a.align_corners), iy = unnormalize(gy, H, a.align_corners);
      Expr x0 = dcall("floor", ix), y0 = dcall("floor", iy);
      Expr tx = ix - x0, ty = iy - y0;
      const double A = -0.75;
      Expr cx[4] = {cubic2(tx + 1.0, A), cubic1(tx, A), cubic1(1.0 - tx, A), cubic2(2.0 - tx, A)};
      Expr cy[4] = {cubic2(ty + 1.0, A), cubic1(ty, A), cubic1(1.0 - ty, A), cubic2(2.0 - ty, A)};
      for (int i = 0; i < 4; ++i) {
        Expr row = dconst(0.0);
        for (int j = 0; j < 4; ++j) row = row + cx[j] * at(pad(y0 + (i - 1.0), H, a), pad(x0 + (j - 1.0), W, a));
        v = (i == 0 ? dconst(0.0) : v) + cy[i] * row;
      }
    } else {
      Expr ix = pad(unnormalize(gx, W, a.align_corners), W, a), iy = pad(unnormalize(gy, H, a.align_corners), H, a);
      if (a.mode == "nearest") {
        v = at(dcall("nearbyint", iy), dcall("nearbyint", ix));
      } else {
        Expr x0 = dcall("floor", ix), y0 = dcall("floor", iy);
        Expr wx1 = ix - x0, wx0 = (x0 + 1.0) - ix, wy1 = iy - y0, wy0 = (y0 + 1.0) - iy;
        v = at(y0, x0) * (wx0 * wy0) + at(y0, x0 + 1.0) * (wx1 * wy0) + at(y0 + 1.0, x0) * (wx0 * wy1) +
            at(y0 + 1.0, x0 + 1.0) * (wx1 * wy1);
      }
    }
    return tir::cast(x.dtype(), v);
  }, "grid_sample")};
}

}  // namespace

void register_grid_sample(Registry& r) { r.add(ops::OpCode::GridSample, grid_sample, nullptr); }

}  // namespace sy::topi::nn
