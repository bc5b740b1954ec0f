// C functions that generated code calls for the ops that are sequential, data-dependent writes or
// data-dependent loops (cumsum, scatter_elements, scatter_nd, topk, prod, roi_align, max_roi_pool,
// det): extern stages, registered in the extern table that the native module is given when it is
// loaded. Semantics are the reference kernels' (backends/reference/kernels_reduce.cpp,
// kernels_scatter.cpp, kernels_image.cpp). Every function takes its buffers
// first (inputs, then the output), then int64 scalars; dtypes are passed as DType codes.
#include "topi/extern_kernels.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "codegen/c/c_generator.h"
#include "ops/attrs.h"
#include "support/dtype.h"
#include "support/wrap_arith.h"
#include "topi/topi.h"

namespace {

using sy::DType;

using sy::wrap_add;
using sy::wrap_mul;

// A double passed as its bits (see bits_of in transform_extern.cpp).
double from_bits(int64_t bits) { return std::bit_cast<double>(bits); }

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

int64_t index_at(const void* p, int64_t index_dtype, int64_t i) {
  if (static_cast<DType>(index_dtype) == DType::i32) return static_cast<const int32_t*>(p)[i];
  return static_cast<const int64_t*>(p)[i];
}

// Negative indices count from the end; out of range is an error, as in the reference (the
// offset of the bad index is not used: the caller returns the fault before reading or writing).
bool normalize(int64_t v, int64_t dim, int64_t* out) {
  if (v < 0) v += dim;
  *out = v;
  return v >= 0 && v < dim;
}

template <typename T>
void apply(int64_t reduction, T& dst, T v) {
  switch (reduction) {
    case sy::topi::kScatterNone: dst = v; break;
    case sy::topi::kScatterAdd: dst = wrap_add<T>(dst, v); break;
    case sy::topi::kScatterMul: dst = wrap_mul<T>(dst, v); break;
    case sy::topi::kScatterMax: dst = std::max(dst, v); break;
    case sy::topi::kScatterMin: dst = std::min(dst, v); break;
    default: break;
  }
}

}  // namespace

extern "C" {

int32_t sy_topi_cumsum(const void* x, void* out, int64_t dtype, int64_t outer, int64_t D, int64_t inner,
                    int64_t exclusive, int64_t reverse) {
  sy::dispatch_dtype(static_cast<DType>(dtype), [&]<typename T>(T) {
    if constexpr (!std::is_same_v<T, bool>) {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      const T* in = static_cast<const T*>(x);
      T* o = static_cast<T*>(out);
      for (int64_t line = 0; line < outer * inner; ++line) {
        const int64_t base = (line / inner) * D * inner + line % inner;
        Acc acc = 0;
        for (int64_t s = 0; s < D; ++s) {
          const int64_t d = reverse ? D - 1 - s : s;
          const T v = in[base + d * inner];
          if (!exclusive) acc = wrap_add<Acc>(acc, static_cast<Acc>(v));
          o[base + d * inner] = static_cast<T>(acc);
          if (exclusive) acc = wrap_add<Acc>(acc, static_cast<Acc>(v));
        }
      }
    }
  });
  return sy::codegen::kKernelOk;
}

int32_t sy_topi_scatter_elements(const void* data, const void* indices, const void* updates, void* out, int64_t dtype,
                              int64_t index_dtype, int64_t reduction, int64_t rank, int64_t axis, int64_t d0,
                              int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t d6, int64_t d7,
                              int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t i4, int64_t i5, int64_t i6,
                              int64_t i7) {
  const int64_t dshape[8] = {d0, d1, d2, d3, d4, d5, d6, d7};
  const int64_t ishape[8] = {i0, i1, i2, i3, i4, i5, i6, i7};
  int64_t dst[8], n_data = 1, n_idx = 1;
  for (int64_t d = rank; d-- > 0;) {
    dst[d] = n_data;
    n_data *= dshape[d];
    n_idx *= ishape[d];
  }
  const size_t esize = sy::dtype_size(static_cast<DType>(dtype));
  std::memcpy(out, data, static_cast<size_t>(n_data) * esize);
  bool fault = false;
  sy::dispatch_dtype(static_cast<DType>(dtype), [&]<typename T>(T) {
    T* o = static_cast<T*>(out);
    const T* up = static_cast<const T*>(updates);
    for (int64_t i = 0; i < n_idx; ++i) {
      int64_t rem = i, off = 0;
      for (int64_t d = rank; d-- > 0;) {
        int64_t c = rem % ishape[d];
        rem /= ishape[d];
        if (d == axis && !normalize(index_at(indices, index_dtype, i), dshape[axis], &c)) fault = true;
        off += c * dst[d];
      }
      if (fault) return;
      apply<T>(reduction, o[off], up[i]);
    }
  });
  return fault ? sy::codegen::kFaultIndexOutOfRange : sy::codegen::kKernelOk;
}

int32_t sy_topi_scatter_nd(const void* data, const void* indices, const void* updates, void* out, int64_t dtype,
                        int64_t index_dtype, int64_t reduction, int64_t rank, int64_t q, int64_t tuples, int64_t d0,
                        int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t d6, int64_t d7) {
  const int64_t dshape[8] = {d0, d1, d2, d3, d4, d5, d6, d7};
  int64_t st[8], n_data = 1;
  for (int64_t d = rank; d-- > 0;) {
    st[d] = n_data;
    n_data *= dshape[d];
  }
  const int64_t slice = st[q - 1];  // elements of data.shape[q:]
  const size_t esize = sy::dtype_size(static_cast<DType>(dtype));
  std::memcpy(out, data, static_cast<size_t>(n_data) * esize);
  bool fault = false;
  sy::dispatch_dtype(static_cast<DType>(dtype), [&]<typename T>(T) {
    T* o = static_cast<T*>(out);
    const T* up = static_cast<const T*>(updates);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < q; ++j) {
        int64_t c = 0;
        if (!normalize(index_at(indices, index_dtype, t * q + j), dshape[j], &c)) fault = true;
        off += c * st[j];
      }
      if (fault) return;
      for (int64_t e = 0; e < slice; ++e) apply<T>(reduction, o[off + e], up[t * slice + e]);
    }
  });
  return fault ? sy::codegen::kFaultIndexOutOfRange : sy::codegen::kKernelOk;
}

int32_t sy_topi_topk_indices(const void* x, int64_t* out, int64_t dtype, int64_t outer, int64_t D, int64_t inner,
                          int64_t k, int64_t largest) {
  sy::dispatch_dtype(static_cast<DType>(dtype), [&]<typename T>(T) {
    const T* in = static_cast<const T*>(x);
    // NaN orders above every number (as np.sort); equal values keep the lower index first.
    auto less = [](T u, T v) { return !is_nan(u) && (is_nan(v) || u < v); };
    std::vector<int64_t> order(static_cast<size_t>(D));
    for (int64_t line = 0; line < outer * inner; ++line) {
      const int64_t o = line / inner, i = line % inner;
      const T* p = in + o * D * inner + i;
      std::iota(order.begin(), order.end(), 0);
      auto cmp = [&](int64_t l, int64_t r) {
        const T u = p[l * inner], v = p[r * inner];
        if (largest ? less(v, u) : less(u, v)) return true;
        if (largest ? less(u, v) : less(v, u)) return false;
        return l < r;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
      for (int64_t j = 0; j < k; ++j) out[(o * k + j) * inner + i] = order[static_cast<size_t>(j)];
    }
  });
  return sy::codegen::kKernelOk;
}

int32_t sy_topi_reduce_prod(const void* x, void* out, int64_t dtype, int64_t rank, int64_t reduced_mask, int64_t d0,
                         int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t d6, int64_t d7) {
  const int64_t dims[8] = {d0, d1, d2, d3, d4, d5, d6, d7};
  // Output strides of the kept axes (row-major over the kept axes; reduced axes stride 0).
  int64_t ost[8], n_in = 1, n_out = 1;
  for (int64_t d = rank; d-- > 0;) {
    const bool reduced = (reduced_mask >> d) & 1;
    ost[d] = reduced ? 0 : n_out;
    if (!reduced) n_out *= dims[d];
    n_in *= dims[d];
  }
  sy::dispatch_dtype(static_cast<DType>(dtype), [&]<typename T>(T) {
    if constexpr (!std::is_same_v<T, bool>) {
      // Floats multiply in double, integers wrap in T (as the reference); inputs are visited in
      // row-major order, so each product is taken in the reference's order.
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      std::vector<Acc> acc(static_cast<size_t>(n_out), Acc(1));
      const T* in = static_cast<const T*>(x);
      for (int64_t i = 0; i < n_in; ++i) {
        int64_t rem = i, off = 0;
        for (int64_t d = rank; d-- > 0;) {
          off += (rem % dims[d]) * ost[d];
          rem /= dims[d];
        }
        acc[static_cast<size_t>(off)] = wrap_mul<Acc>(acc[static_cast<size_t>(off)], static_cast<Acc>(in[i]));
      }
      T* o = static_cast<T*>(out);
      for (int64_t j = 0; j < n_out; ++j) o[j] = static_cast<T>(acc[static_cast<size_t>(j)]);
    }
  });
  return sy::codegen::kKernelOk;
}

// RoiAlign (the reference's image.roi_align): per region and bin, the sample taps (offset in a
// plane and weight, or none for a sample outside the image) are found once and applied to every
// channel; regions in parallel.
int32_t sy_topi_roi_align(const void* x, const void* rois, const void* batch_indices, void* out, int64_t dtype,
                          int64_t index_dtype, int64_t N, int64_t C, int64_t H, int64_t W, int64_t R, int64_t PH,
                          int64_t PW, int64_t sampling_ratio, int64_t spatial_scale_bits, int64_t mode_max,
                          int64_t half_pixel) {
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = index_at(batch_indices, index_dtype, r);
    if (b < 0 || b >= N) return sy::codegen::kFaultIndexOutOfRange;
  }
  const double scale = from_bits(spatial_scale_bits);
  const double offset = half_pixel ? 0.5 : 0.0;
  std::atomic<bool> too_large{false};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(x);
    const T* box = static_cast<const T*>(rois);
    T* dst = static_cast<T*>(out);
#pragma omp parallel for schedule(dynamic)
    for (int64_t r = 0; r < R; ++r) {
      struct Tap {
        int64_t off[4];
        double w[4];
      };
      const double bx = static_cast<double>(box[r * 4]) * scale - offset, by = static_cast<double>(box[r * 4 + 1]) * scale - offset;
      double rw = static_cast<double>(box[r * 4 + 2]) * scale - offset - bx;
      double rh = static_cast<double>(box[r * 4 + 3]) * scale - offset - by;
      if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
      const double bin_h = rh / static_cast<double>(PH), bin_w = rw / static_cast<double>(PW);
      // A reversed region (x2 < x1, aligned) or one of NaN coordinates has no samples: its bins are 0.
      double grid_h = sampling_ratio > 0 ? static_cast<double>(sampling_ratio) : std::ceil(rh / static_cast<double>(PH));
      double grid_w = sampling_ratio > 0 ? static_cast<double>(sampling_ratio) : std::ceil(rw / static_cast<double>(PW));
      if (!(grid_h > 0) || !(grid_w > 0)) grid_h = grid_w = 0;
      if (grid_h * grid_w * static_cast<double>(PH * PW) > sy::ops::kRoiMaxSamples) {
        too_large = true;
        continue;
      }
      const int64_t gh = static_cast<int64_t>(grid_h), gw = static_cast<int64_t>(grid_w);
      const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
      std::vector<Tap> taps;
      taps.reserve(static_cast<size_t>(std::max<int64_t>(PH * PW * gh * gw, 0)));
      for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw)
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double y = by + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(gh);
              double xx = bx + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(gw);
              Tap t{{0, 0, 0, 0}, {0, 0, 0, 0}};
              if (y >= -1.0 && y <= static_cast<double>(H) && xx >= -1.0 && xx <= static_cast<double>(W)) {
                y = std::max(y, 0.0);
                xx = std::max(xx, 0.0);
                int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(xx);
                int64_t y1 = y0 + 1, x1 = x0 + 1;
                if (y0 >= H - 1) y0 = y1 = H - 1, y = static_cast<double>(y0);
                if (x0 >= W - 1) x0 = x1 = W - 1, xx = static_cast<double>(x0);
                const double ly = y - static_cast<double>(y0), lx = xx - static_cast<double>(x0);
                t = Tap{{y0 * W + x0, y0 * W + x1, y1 * W + x0, y1 * W + x1},
                        {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx}};
              }
              taps.push_back(t);
            }
      const int64_t per_bin = gh * gw;
      const T* image = src + index_at(batch_indices, index_dtype, r) * C * H * W;
      for (int64_t ch = 0; ch < C; ++ch) {
        const T* plane = image + ch * H * W;
        T* o = dst + (r * C + ch) * PH * PW;
        for (int64_t bin = 0; bin < PH * PW; ++bin) {
          double acc = 0.0;
          for (int64_t s = 0; s < per_bin; ++s) {
            const Tap& t = taps[static_cast<size_t>(bin * per_bin + s)];
            double v[4];
            for (int k = 0; k < 4; ++k) v[k] = t.w[k] * static_cast<double>(plane[t.off[k]]);
            if (!mode_max) acc += v[0] + v[1] + v[2] + v[3];
            else acc = s == 0 ? std::max(std::max(std::max(v[0], v[1]), v[2]), v[3])
                              : std::max(acc, std::max(std::max(std::max(v[0], v[1]), v[2]), v[3]));
          }
          o[bin] = static_cast<T>(mode_max ? acc : acc / count);
        }
      }
    }
  };
  if (static_cast<DType>(dtype) == DType::f64) run(double{});
  else run(float{});
  return too_large ? sy::codegen::kFaultCoordinates : sy::codegen::kKernelOk;
}

// MaxRoiPool (the reference's image.max_roi_pool): each region's bins (whole pixels) found once,
// the max taken per channel; regions in parallel.
int32_t sy_topi_max_roi_pool(const void* x, const void* rois, void* out, int64_t dtype, int64_t N, int64_t C, int64_t H,
                             int64_t W, int64_t R, int64_t PH, int64_t PW, int64_t spatial_scale_bits) {
  const double scale_d = from_bits(spatial_scale_bits);
  auto run = [&](auto tag) -> int32_t {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(x);
    const T* box = static_cast<const T*>(rois);
    T* dst = static_cast<T*>(out);
    const T scale = static_cast<T>(scale_d);
    for (int64_t r = 0; r < R; ++r) {
      const double bi = static_cast<double>(box[r * 5]);
      if (!(bi >= 0 && bi < static_cast<double>(N))) return sy::codegen::kFaultIndexOutOfRange;
      for (int k = 1; k < 5; ++k)
        if (!(std::fabs(static_cast<double>(std::round(box[r * 5 + k] * scale))) <= sy::ops::kRoiMaxCoordinate))
          return sy::codegen::kFaultCoordinates;
    }
#pragma omp parallel for schedule(dynamic)
    for (int64_t r = 0; r < R; ++r) {
      const T* b = box + r * 5;
      const int64_t n = static_cast<int64_t>(b[0]);
      const int64_t x1 = static_cast<int64_t>(std::round(b[1] * scale)), y1 = static_cast<int64_t>(std::round(b[2] * scale));
      const int64_t x2 = static_cast<int64_t>(std::round(b[3] * scale)), y2 = static_cast<int64_t>(std::round(b[4] * scale));
      const T bh = static_cast<T>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<T>(PH);
      const T bw = static_cast<T>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<T>(PW);
      std::vector<int64_t> rows(static_cast<size_t>(2 * PH)), cols(static_cast<size_t>(2 * PW));
      auto edge = [](T v, int64_t origin, int64_t size) { return std::min(std::max<int64_t>(static_cast<int64_t>(v) + origin, 0), size); };
      for (int64_t p = 0; p < PH; ++p) {
        rows[static_cast<size_t>(2 * p)] = edge(std::floor(static_cast<T>(p) * bh), y1, H);
        rows[static_cast<size_t>(2 * p + 1)] = edge(std::ceil(static_cast<T>(p + 1) * bh), y1, H);
      }
      for (int64_t p = 0; p < PW; ++p) {
        cols[static_cast<size_t>(2 * p)] = edge(std::floor(static_cast<T>(p) * bw), x1, W);
        cols[static_cast<size_t>(2 * p + 1)] = edge(std::ceil(static_cast<T>(p + 1) * bw), x1, W);
      }
      for (int64_t c = 0; c < C; ++c) {
        const T* plane = src + (n * C + c) * H * W;
        for (int64_t ph = 0; ph < PH; ++ph)
          for (int64_t pw = 0; pw < PW; ++pw) {
            const int64_t h0 = rows[static_cast<size_t>(2 * ph)], h1 = rows[static_cast<size_t>(2 * ph + 1)];
            const int64_t w0 = cols[static_cast<size_t>(2 * pw)], w1 = cols[static_cast<size_t>(2 * pw + 1)];
            T m = (h1 <= h0 || w1 <= w0) ? T(0) : static_cast<T>(-FLT_MAX);
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) m = plane[h * W + w] > m ? plane[h * W + w] : m;
            dst[((r * C + c) * PH + ph) * PW + pw] = m;
          }
      }
    }
    return sy::codegen::kKernelOk;
  };
  return static_cast<DType>(dtype) == DType::f64 ? run(double{}) : run(float{});
}

// Determinants (the reference's det): LU with partial pivoting in double, rows swapped through a
// permutation instead of moved; matrices in parallel.
int32_t sy_topi_det(const void* x, void* out, int64_t dtype, int64_t count, int64_t M) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(x);
    T* o = static_cast<T*>(out);
#pragma omp parallel for if (count * M * M * M > 100000)
    for (int64_t b = 0; b < count; ++b) {
      std::vector<double> a(static_cast<size_t>(M * M));
      std::vector<int64_t> row(static_cast<size_t>(M));
      for (int64_t i = 0; i < M * M; ++i) a[static_cast<size_t>(i)] = static_cast<double>(in[b * M * M + i]);
      std::iota(row.begin(), row.end(), int64_t{0});
      auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(row[static_cast<size_t>(r)] * M + c)]; };
      double d = 1.0;
      for (int64_t k = 0; k < M && d != 0.0; ++k) {
        int64_t p = k;
        for (int64_t r = k + 1; r < M; ++r) p = std::fabs(at(r, k)) > std::fabs(at(p, k)) ? r : p;
        if (p != k) std::swap(row[static_cast<size_t>(p)], row[static_cast<size_t>(k)]), d = -d;
        const double pivot = at(k, k);
        d = pivot == 0.0 ? 0.0 : d * pivot;
        if (d == 0.0) break;
        for (int64_t r = k + 1; r < M; ++r) {
          const double f = at(r, k) / pivot;
          for (int64_t c = k + 1; c < M; ++c) at(r, c) -= f * at(k, c);
        }
      }
      o[b] = static_cast<T>(d);
    }
  };
  if (static_cast<DType>(dtype) == DType::f64) run(double{});
  else run(float{});
  return sy::codegen::kKernelOk;
}

}  // extern "C"

namespace sy::topi {

void register_extern_kernels(Registry& r) {
  r.add_extern("sy_topi_cumsum", reinterpret_cast<void*>(&sy_topi_cumsum));
  r.add_extern("sy_topi_scatter_elements", reinterpret_cast<void*>(&sy_topi_scatter_elements));
  r.add_extern("sy_topi_scatter_nd", reinterpret_cast<void*>(&sy_topi_scatter_nd));
  r.add_extern("sy_topi_topk_indices", reinterpret_cast<void*>(&sy_topi_topk_indices));
  r.add_extern("sy_topi_reduce_prod", reinterpret_cast<void*>(&sy_topi_reduce_prod));
  r.add_extern("sy_topi_roi_align", reinterpret_cast<void*>(&sy_topi_roi_align));
  r.add_extern("sy_topi_max_roi_pool", reinterpret_cast<void*>(&sy_topi_max_roi_pool));
  r.add_extern("sy_topi_det", reinterpret_cast<void*>(&sy_topi_det));
}

}  // namespace sy::topi
