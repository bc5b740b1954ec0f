// Reference kernels of image-layout ops: depth_to_space, space_to_depth, resize2d (nearest,
// linear, cubic with the ONNX coordinate transformation modes) and grid_sample.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {

Tensor depth_to_space(const ops::DepthToSpaceAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(x.ndim() == 4) << "nn.depth_to_space: expects NCHW data";
  const int64_t b = a.blocksize;
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  if (b < 1 || C % (b * b) != 0)
    throw Error("nn.depth_to_space: " + std::to_string(C) + " channels are not divisible by blocksize^2 = " +
                std::to_string(b * b));
  const int64_t Cout = C / (b * b);
  Shape view;
  std::vector<int64_t> perm;
  if (a.mode == "DCR") {
    view = {N, b, b, Cout, H, W};
    perm = {0, 3, 4, 1, 5, 2};
  } else if (a.mode == "CRD") {
    view = {N, Cout, b, b, H, W};
    perm = {0, 1, 4, 2, 5, 3};
  } else {
    throw Error("nn.depth_to_space: unknown mode '" + a.mode + "' (expected DCR or CRD)");
  }
  Tensor t = transpose_tensor(x.reshaped(view), perm);
  SY_CHECK(t.numel() == out.numel()) << "nn.depth_to_space: output shape mismatch";
  return t.reshaped(out.shape());
}

Tensor space_to_depth(const ops::BlockSizeAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(x.ndim() == 4) << "nn.space_to_depth: expects NCHW data";
  const int64_t b = a.blocksize;
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  if (b < 1 || H % b != 0 || W % b != 0)
    throw Error("nn.space_to_depth: spatial size " + std::to_string(H) + "x" + std::to_string(W) +
                " is not divisible by blocksize " + std::to_string(b));
  Tensor t = transpose_tensor(x.reshaped({N, C, H / b, b, W / b, b}), {0, 3, 5, 1, 2, 4});
  SY_CHECK(t.numel() == out.numel()) << "nn.space_to_depth: output shape mismatch";
  return t.reshaped(out.shape());
}

namespace {

// Interpolation taps of one output position along one axis: source indices and weights.
struct Taps {
  int n = 0;
  int64_t idx[4]{};
  double w[4]{};
};

double source_coordinate(int64_t xo, int64_t in_len, int64_t out_len, const std::string& mode, double given_scale) {
  const double x = static_cast<double>(xo);
  const double scale = given_scale > 0 ? given_scale : static_cast<double>(out_len) / static_cast<double>(in_len);
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out_len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return out_len == 1 ? 0.0 : x * static_cast<double>(in_len - 1) / static_cast<double>(out_len - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  throw Error("image.resize2d: unsupported coordinate_transformation_mode '" + mode + "'");
}

std::vector<Taps> axis_taps(const ops::Resize2dAttrs& a, int64_t in_len, int64_t out_len, double given_scale) {
  std::vector<Taps> taps(static_cast<size_t>(out_len));
  auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in_len - 1); };
  for (int64_t o = 0; o < out_len; ++o) {
    const double x = source_coordinate(o, in_len, out_len, a.coordinate_transformation_mode, given_scale);
    const double fl = std::floor(x);
    const double r = x - fl;
    const auto i0 = static_cast<int64_t>(fl);
    Taps& t = taps[static_cast<size_t>(o)];
    if (a.mode == "nearest") {
      int64_t i = i0;
      if (r != 0.0) {
        const std::string& nm = a.nearest_mode;
        if (nm == "round_prefer_floor") i = r <= 0.5 ? i0 : i0 + 1;
        else if (nm == "round_prefer_ceil") i = r < 0.5 ? i0 : i0 + 1;
        else if (nm == "floor") i = i0;
        else if (nm == "ceil") i = i0 + 1;
        else throw Error("image.resize2d: unknown nearest_mode '" + nm + "'");
      }
      t.n = 1;
      t.idx[0] = clamp(i);
      t.w[0] = 1.0;
    } else if (a.mode == "linear") {
      t.n = 2;
      t.idx[0] = clamp(i0);
      t.idx[1] = clamp(i0 + 1);
      t.w[0] = 1.0 - r;
      t.w[1] = r;
    } else if (a.mode == "cubic") {
      // Keys' cubic convolution with coefficient A, as ONNX; out-of-range taps repeat the edge.
      const double A = a.cubic_coeff_a;
      const double s = 1.0 - r;
      t.n = 4;
      t.w[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
      t.w[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
      t.w[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
      t.w[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
      for (int k = 0; k < 4; ++k) t.idx[k] = clamp(i0 - 1 + k);
    } else {
      throw Error("image.resize2d: unknown mode '" + a.mode + "' (expected nearest, linear or cubic)");
    }
    if (a.exclude_outside && t.n > 1) {
      // Tap k reads i0 + k (linear) or i0 - 1 + k (cubic) before clamping.
      const int64_t first = t.n == 2 ? i0 : i0 - 1;
      double sum = 0.0;
      for (int k = 0; k < t.n; ++k) {
        if (first + k < 0 || first + k >= in_len) t.w[k] = 0.0;
        sum += t.w[k];
      }
      for (int k = 0; k < t.n; ++k) t.w[k] /= sum;
    }
  }
  return taps;
}

}  // namespace

Tensor resize2d(const ops::Resize2dAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(x.ndim() >= 2 && out.ndim() == x.ndim()) << "image.resize2d: expects data of rank >= 2";
  const size_t r = x.shape().size();
  const int64_t H = x.shape()[r - 2], W = x.shape()[r - 1];
  const int64_t OH = out.shape()[r - 2], OW = out.shape()[r - 1];
  const int64_t planes = dims_product(x.shape(), 0, r - 2);
  SY_CHECK(planes == dims_product(out.shape(), 0, r - 2)) << "image.resize2d: leading axes must not change";
  if (out.numel() == 0) return out;
  if (H == 0 || W == 0) throw Error("image.resize2d: cannot resize an empty image " + shape_str(x.shape()));
  std::vector<Taps> th = axis_taps(a, H, OH, a.scale_h), tw = axis_taps(a, W, OW, a.scale_w);
  if (a.mode == "nearest") {
    dispatch_bytes(dtype_size(x.dtype()), [&](auto tag) {
      using U = decltype(tag);
      const U* src = ptr<U>(x);
      U* dst = ptr<U>(out);
#pragma omp parallel for if (out.numel() > kParallelGrain)
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow)
            dst[(p * OH + oh) * OW + ow] =
                src[(p * H + th[static_cast<size_t>(oh)].idx[0]) * W + tw[static_cast<size_t>(ow)].idx[0]];
    });
    return out;
  }
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64)
    throw Error("image.resize2d: " + a.mode + " mode needs float data, got " + std::string(dtype_name(x.dtype())));
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* src = ptr<T>(x);
      T* dst = ptr<T>(out);
#pragma omp parallel for if (out.numel() > kParallelGrain)
      for (int64_t p = 0; p < planes; ++p) {
        const T* plane = src + p * H * W;
        for (int64_t oh = 0; oh < OH; ++oh) {
          const Taps& h = th[static_cast<size_t>(oh)];
          for (int64_t ow = 0; ow < OW; ++ow) {
            const Taps& w = tw[static_cast<size_t>(ow)];
            double acc = 0.0;
            for (int i = 0; i < h.n; ++i) {
              double row = 0.0;
              for (int j = 0; j < w.n; ++j) row += w.w[j] * static_cast<double>(plane[h.idx[i] * W + w.idx[j]]);
              acc += h.w[i] * row;
            }
            dst[(p * OH + oh) * OW + ow] = static_cast<T>(acc);
          }
        }
      }
    }
  });
  return out;
}

namespace {

// GridSample as PyTorch's grid_sampler_2d computes it (ATen/native/GridSampler.h), in double. The
// native compute (topi/nn_grid_sample.cpp) writes the same formulas; where PyTorch leaves NaN
// and huge coordinates to C's conversions, both treat them alike: min/max give their second
// operand when a comparison is unordered, and an index is converted from a coordinate clamped
// to [-2, size + 1] (NaN: -2), which keeps out of range what was.
double gs_max(double a, double b) { return a > b ? a : b; }
double gs_min(double a, double b) { return a < b ? a : b; }

double gs_unnormalize(double c, int64_t size, bool align) {
  return align ? (c + 1) / 2 * static_cast<double>(size - 1) : ((c + 1) * static_cast<double>(size) - 1) / 2;
}

double gs_clip(double c, int64_t size) { return gs_min(gs_max(c, 0.0), static_cast<double>(size - 1)); }

// Reflects c about the bounds twice_low / 2 and twice_high / 2.
double gs_reflect(double c, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double mn = twice_low / 2, span = (twice_high - twice_low) / 2;
  c = std::fabs(c - mn);
  const double flips = std::floor(c / span);
  const double extra = c - span * flips;
  return flips - 2 * std::floor(flips / 2) == 0 ? extra + mn : span - extra + mn;
}

double gs_pad(double c, int64_t size, const ops::GridSampleAttrs& a) {
  if (a.padding_mode == "border") return gs_clip(c, size);
  if (a.padding_mode == "reflection") {
    const double s = static_cast<double>(size);
    c = a.align_corners ? gs_reflect(c, 0, 2 * (s - 1)) : gs_reflect(c, -1, 2 * s - 1);
    return gs_clip(c, size);
  }
  return c;
}

int64_t gs_index(double c, int64_t size) {
  return static_cast<int64_t>(gs_min(gs_max(c, -2.0), static_cast<double>(size + 1)));
}

double gs_cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
double gs_cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

}  // namespace

Tensor grid_sample(const ops::GridSampleAttrs& a, const Tensor& x, const Tensor& grid, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(x.ndim() == 4 && grid.ndim() == 4 && grid.shape()[3] == 2) << "image.grid_sample: expects NCHW data and an N,H,W,2 grid";
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64)
    throw Error("image.grid_sample: needs float data, got " + std::string(dtype_name(x.dtype())));
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t OH = grid.shape()[1], OW = grid.shape()[2];
  if (out.numel() == 0) return out;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* src = ptr<T>(x);
      const T* g = ptr<T>(grid);
      T* dst = ptr<T>(out);
#pragma omp parallel for if (out.numel() > kParallelGrain)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const T* gp = g + ((n * OH + oh) * OW + ow) * 2;
            const double gx = static_cast<double>(gp[0]), gy = static_cast<double>(gp[1]);
            // The taps (offsets in a plane, -1 outside the image) and their weights, the same for
            // every channel.
            auto offset = [&](double yc, double xc) -> int64_t {
              const int64_t yi = gs_index(yc, H), xi = gs_index(xc, W);
              return (yi < 0 || yi >= H || xi < 0 || xi >= W) ? -1 : yi * W + xi;
            };
            int64_t off[16];
            double cx[4] = {0, 0, 0, 0}, cy[4] = {0, 0, 0, 0}, w[4] = {0, 0, 0, 0};
            if (a.mode == "bicubic") {
              const double ix = gs_unnormalize(gx, W, a.align_corners), iy = gs_unnormalize(gy, H, a.align_corners);
              const double x0 = std::floor(ix), y0 = std::floor(iy), tx = ix - x0, ty = iy - y0;
              const double A = -0.75;
              const double wx[4] = {gs_cubic2(tx + 1, A), gs_cubic1(tx, A), gs_cubic1(1 - tx, A), gs_cubic2(2 - tx, A)};
              const double wy[4] = {gs_cubic2(ty + 1, A), gs_cubic1(ty, A), gs_cubic1(1 - ty, A), gs_cubic2(2 - ty, A)};
              std::copy(wx, wx + 4, cx);
              std::copy(wy, wy + 4, cy);
              for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) off[i * 4 + j] = offset(gs_pad(y0 - 1 + i, H, a), gs_pad(x0 - 1 + j, W, a));
            } else {
              const double ix = gs_pad(gs_unnormalize(gx, W, a.align_corners), W, a);
              const double iy = gs_pad(gs_unnormalize(gy, H, a.align_corners), H, a);
              if (a.mode == "nearest") {
                off[0] = offset(std::nearbyint(iy), std::nearbyint(ix));
              } else {
                const double x0 = std::floor(ix), y0 = std::floor(iy);
                const double wx1 = ix - x0, wx0 = (x0 + 1) - ix, wy1 = iy - y0, wy0 = (y0 + 1) - iy;
                off[0] = offset(y0, x0), off[1] = offset(y0, x0 + 1), off[2] = offset(y0 + 1, x0), off[3] = offset(y0 + 1, x0 + 1);
                w[0] = wx0 * wy0, w[1] = wx1 * wy0, w[2] = wx0 * wy1, w[3] = wx1 * wy1;
              }
            }
            for (int64_t ch = 0; ch < C; ++ch) {
              const T* plane = src + (n * C + ch) * H * W;
              auto at = [&](int k) { return off[k] < 0 ? 0.0 : static_cast<double>(plane[off[k]]); };
              double v = 0.0;
              if (a.mode == "bicubic") {
                for (int i = 0; i < 4; ++i) {
                  double row = 0.0;
                  for (int j = 0; j < 4; ++j) row += cx[j] * at(i * 4 + j);
                  v += cy[i] * row;
                }
              } else if (a.mode == "nearest") {
                v = at(0);
              } else {
                v = at(0) * w[0] + at(1) * w[1] + at(2) * w[2] + at(3) * w[3];
              }
              dst[((n * C + ch) * OH + oh) * OW + ow] = static_cast<T>(v);
            }
          }
    }
  });
  return out;
}

// RoiAlign as the ONNX reference computes it (onnx/reference/ops/op_roi_align.py, after ONNX
// Runtime's kernel), in double: a bin's samples sit at the centres of a grid over it; a sample
// more than one pixel outside the image counts 0, one nearer is clamped to the edge; avg divides
// the sum by the number of samples, max takes the largest of the weighted taps.
Tensor roi_align(const ops::RoiAlignAttrs& a, const Tensor& x, const Tensor& rois, const Tensor& batch_indices,
                 const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64)
    throw Error("image.roi_align: needs float data, got " + std::string(dtype_name(x.dtype())));
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t R = rois.shape()[0], PH = a.output_height, PW = a.output_width;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = index_at(batch_indices, r);
    if (b < 0 || b >= N)
      throw Error("image.roi_align: batch index " + std::to_string(b) + " of roi " + std::to_string(r) +
                  " is out of range for a batch of " + std::to_string(N));
  }
  if (out.numel() == 0) return out;
  const double offset = a.half_pixel ? 0.5 : 0.0;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* src = ptr<T>(x);
      const T* box = ptr<T>(rois);
      T* dst = ptr<T>(out);
      for (int64_t r = 0; r < R; ++r) {
        const T* plane0 = src + index_at(batch_indices, r) * C * H * W;
        const double x1 = static_cast<double>(box[r * 4 + 0]) * a.spatial_scale - offset;
        const double y1 = static_cast<double>(box[r * 4 + 1]) * a.spatial_scale - offset;
        const double x2 = static_cast<double>(box[r * 4 + 2]) * a.spatial_scale - offset;
        const double y2 = static_cast<double>(box[r * 4 + 3]) * a.spatial_scale - offset;
        double rw = x2 - x1, rh = y2 - y1;
        if (!a.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
        const double bh = rh / static_cast<double>(PH), bw = rw / static_cast<double>(PW);
        // Adaptive: ceil(size / bins) samples a side; none for a reversed region or NaN corners.
        double grid_h = a.sampling_ratio > 0 ? static_cast<double>(a.sampling_ratio) : std::ceil(rh / static_cast<double>(PH));
        double grid_w = a.sampling_ratio > 0 ? static_cast<double>(a.sampling_ratio) : std::ceil(rw / static_cast<double>(PW));
        if (!(grid_h > 0) || !(grid_w > 0)) grid_h = grid_w = 0;
        if (grid_h * grid_w * static_cast<double>(PH * PW) > ops::kRoiMaxSamples)
          throw Error("image.roi_align: roi " + std::to_string(r) + " would take " +
                      std::to_string(grid_h * grid_w * static_cast<double>(PH * PW)) + " samples (at most " +
                      std::to_string(static_cast<int64_t>(ops::kRoiMaxSamples)) + ")");
        const int64_t gh = static_cast<int64_t>(grid_h), gw = static_cast<int64_t>(grid_w);
        const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
        for (int64_t ch = 0; ch < C; ++ch) {
          const T* plane = plane0 + ch * H * W;
          for (int64_t ph = 0; ph < PH; ++ph)
            for (int64_t pw = 0; pw < PW; ++pw) {
              double acc = 0.0;
              bool first = true;
              for (int64_t iy = 0; iy < gh; ++iy)
                for (int64_t ix = 0; ix < gw; ++ix) {
                  double yy = y1 + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
                  double xx = x1 + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
                  double taps[4] = {0, 0, 0, 0};  // weighted values of the four neighbours
                  // (NaN coordinates are outside too.)
                  if (yy >= -1.0 && yy <= static_cast<double>(H) && xx >= -1.0 && xx <= static_cast<double>(W)) {
                    yy = std::max(yy, 0.0);
                    xx = std::max(xx, 0.0);
                    int64_t ylo = static_cast<int64_t>(yy), xlo = static_cast<int64_t>(xx), yhi, xhi;
                    if (ylo >= H - 1) yhi = ylo = H - 1, yy = static_cast<double>(ylo);
                    else yhi = ylo + 1;
                    if (xlo >= W - 1) xhi = xlo = W - 1, xx = static_cast<double>(xlo);
                    else xhi = xlo + 1;
                    const double ly = yy - static_cast<double>(ylo), lx = xx - static_cast<double>(xlo);
                    const double hy = 1.0 - ly, hx = 1.0 - lx;
                    taps[0] = hy * hx * static_cast<double>(plane[ylo * W + xlo]);
                    taps[1] = hy * lx * static_cast<double>(plane[ylo * W + xhi]);
                    taps[2] = ly * hx * static_cast<double>(plane[yhi * W + xlo]);
                    taps[3] = ly * lx * static_cast<double>(plane[yhi * W + xhi]);
                  }
                  if (a.mode == "avg") {
                    acc += taps[0] + taps[1] + taps[2] + taps[3];
                  } else {
                    const double v = std::max(std::max(std::max(taps[0], taps[1]), taps[2]), taps[3]);
                    acc = first ? v : std::max(acc, v);
                    first = false;
                  }
                }
              dst[((r * C + ch) * PH + ph) * PW + pw] = static_cast<T>(a.mode == "avg" ? acc / count : acc);
            }
        }
      }
    }
  });
  return out;
}

// MaxRoiPool as torchvision's roi_pool and ONNX Runtime compute it (Caffe's ROIPooling), in the
// data's type: the region's corners rounded (half away from zero) in the scaled image, at least
// one pixel each way; bin edges floor and ceil of multiples of the bin size, clipped to the image.
Tensor max_roi_pool(const ops::MaxRoiPoolAttrs& a, const Tensor& x, const Tensor& rois, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64)
    throw Error("image.max_roi_pool: needs float data, got " + std::string(dtype_name(x.dtype())));
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t R = rois.shape()[0], PH = a.pooled_shape[0], PW = a.pooled_shape[1];
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* src = ptr<T>(x);
      const T* box = ptr<T>(rois);
      T* dst = ptr<T>(out);
      const T scale = static_cast<T>(a.spatial_scale);
      for (int64_t r = 0; r < R; ++r) {
        const T* b = box + r * 5;
        const double bi = static_cast<double>(b[0]);
        if (!(bi >= 0 && bi < static_cast<double>(N)))
          throw Error("image.max_roi_pool: batch index " + std::to_string(bi) + " of roi " + std::to_string(r) +
                      " is out of range for a batch of " + std::to_string(N));
        const int64_t n = static_cast<int64_t>(bi);
        int64_t corner[4];  // x1, y1, x2, y2 in whole pixels of the scaled image
        for (int k = 0; k < 4; ++k) {
          const T v = std::round(b[k + 1] * scale);
          if (!(std::fabs(static_cast<double>(v)) <= ops::kRoiMaxCoordinate))
            throw Error("image.max_roi_pool: roi " + std::to_string(r) + " has the coordinate " +
                        std::to_string(static_cast<double>(b[k + 1])) + " (not finite, or too large)");
          corner[k] = static_cast<int64_t>(v);
        }
        const int64_t x1 = corner[0], y1 = corner[1], x2 = corner[2], y2 = corner[3];
        const T bin_h = static_cast<T>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<T>(PH);
        const T bin_w = static_cast<T>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<T>(PW);
        auto clip = [](int64_t v, int64_t hi) { return std::min(std::max<int64_t>(v, 0), hi); };
        for (int64_t c = 0; c < C; ++c)
          for (int64_t ph = 0; ph < PH; ++ph)
            for (int64_t pw = 0; pw < PW; ++pw) {
              const int64_t h0 = clip(static_cast<int64_t>(std::floor(static_cast<T>(ph) * bin_h)) + y1, H);
              const int64_t h1 = clip(static_cast<int64_t>(std::ceil(static_cast<T>(ph + 1) * bin_h)) + y1, H);
              const int64_t w0 = clip(static_cast<int64_t>(std::floor(static_cast<T>(pw) * bin_w)) + x1, W);
              const int64_t w1 = clip(static_cast<int64_t>(std::ceil(static_cast<T>(pw + 1) * bin_w)) + x1, W);
              T m = (h1 <= h0 || w1 <= w0) ? T(0) : static_cast<T>(-FLT_MAX);
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w) {
                  const T v = src[((n * C + c) * H + h) * W + w];
                  if (v > m) m = v;
                }
              dst[((r * C + c) * PH + ph) * PW + pw] = m;
            }
      }
    }
  });
  return out;
}

}  // namespace sy::reference::detail
