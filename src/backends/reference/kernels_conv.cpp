// Reference kernels of 2-D convolution and transposed convolution (NCHW, any groups/dilation).
// Direct loops (no im2col): for each output plane, accumulate weight * shifted input rows so that
// the innermost loop runs contiguously over the output width.
#include <algorithm>
#include <sstream>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

// Floor and ceiling of a / b for b > 0 and any sign of a.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Range [lo, hi) of output positions o with o * stride + shift in [0, in_len), clipped to [0, out_len).
void valid_range(int64_t stride, int64_t shift, int64_t in_len, int64_t out_len, int64_t& lo, int64_t& hi) {
  lo = std::max<int64_t>(0, ceil_div(-shift, stride));
  hi = std::min<int64_t>(out_len, floor_div(in_len - 1 - shift, stride) + 1);
  if (hi < lo) hi = lo;
}

struct ConvGeom {
  int64_t N, C, H, W;        // input
  int64_t O, Cg, KH, KW;     // weight (Conv: O, C/groups, KH, KW)
  int64_t OH, OW;            // output
  int64_t G;
  int64_t sh, sw, pt, pl, dh, dw;
};

void check_conv_attrs(const char* op, const std::vector<int64_t>& strides, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& dilation, int64_t groups) {
  std::ostringstream os;
  if (strides.size() != 2 || padding.size() != 4 || dilation.size() != 2) {
    os << op << ": expects 2 strides, 4 paddings and 2 dilations";
  } else if (strides[0] < 1 || strides[1] < 1 || dilation[0] < 1 || dilation[1] < 1) {
    os << op << ": strides and dilation must be positive";
  } else if (groups < 1) {
    os << op << ": groups must be positive";
  }
  if (!os.str().empty()) throw Error(os.str());
}

constexpr int64_t kBlock = 4;

// orow[i] += sum_k wv[k] * ip[k][in_off + i * step] over a block of kBlock input channels.
template <typename T>
void accumulate_block(T* orow, int64_t len, int64_t step, int64_t in_off, const T* const* ip, const T* wv) {
  const T* r0 = ip[0] + in_off;
  const T* r1 = ip[1] + in_off;
  const T* r2 = ip[2] + in_off;
  const T* r3 = ip[3] + in_off;
  const T a0 = wv[0], a1 = wv[1], a2 = wv[2], a3 = wv[3];
  if (step == 1) {
    for (int64_t i = 0; i < len; ++i) orow[i] += a0 * r0[i] + a1 * r1[i] + a2 * r2[i] + a3 * r3[i];
  } else {
    for (int64_t i = 0; i < len; ++i) {
      const int64_t j = i * step;
      orow[i] += a0 * r0[j] + a1 * r1[j] + a2 * r2[j] + a3 * r3[j];
    }
  }
}

template <typename T>
void conv2d_impl(const ConvGeom& g, const T* x, const T* w, const T* bias, T* out) {
  const int64_t Og = g.O / g.G;
  const int64_t plane = g.OH * g.OW;
  // Valid output ranges per kernel row/column, computed once (the divisions would otherwise
  // dominate small planes).
  std::vector<int64_t> oh_lo(static_cast<size_t>(g.KH)), oh_hi(oh_lo.size());
  std::vector<int64_t> ow_lo(static_cast<size_t>(g.KW)), ow_hi(ow_lo.size());
  for (int64_t kh = 0; kh < g.KH; ++kh)
    valid_range(g.sh, kh * g.dh - g.pt, g.H, g.OH, oh_lo[static_cast<size_t>(kh)], oh_hi[static_cast<size_t>(kh)]);
  for (int64_t kw = 0; kw < g.KW; ++kw)
    valid_range(g.sw, kw * g.dw - g.pl, g.W, g.OW, ow_lo[static_cast<size_t>(kw)], ow_hi[static_cast<size_t>(kw)]);
#pragma omp parallel for schedule(dynamic)
  for (int64_t no = 0; no < g.N * g.O; ++no) {
    const int64_t n = no / g.O, o = no % g.O, grp = o / Og;
    T* op = out + no * plane;
    const T b0 = bias ? bias[o] : T(0);
    for (int64_t i = 0; i < plane; ++i) op[i] = b0;
    // Input channels in blocks of kBlock: each output row is read and written once per block
    // instead of once per channel, and the block's input planes stay in cache across the taps.
    for (int64_t ic0 = 0; ic0 < g.Cg; ic0 += kBlock) {
      const int64_t nb = std::min<int64_t>(kBlock, g.Cg - ic0);
      const T* ip[kBlock];
      const T* wp[kBlock];
      for (int64_t k = 0; k < nb; ++k) {
        ip[k] = x + ((n * g.C) + grp * g.Cg + ic0 + k) * g.H * g.W;
        wp[k] = w + (o * g.Cg + ic0 + k) * g.KH * g.KW;
      }
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        const int64_t hshift = kh * g.dh - g.pt;
        const int64_t h0 = oh_lo[static_cast<size_t>(kh)], h1 = oh_hi[static_cast<size_t>(kh)];
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const int64_t wshift = kw * g.dw - g.pl;
          const int64_t w0 = ow_lo[static_cast<size_t>(kw)], w1 = ow_hi[static_cast<size_t>(kw)];
          if (h0 >= h1 || w0 >= w1) continue;
          T wv[kBlock];
          for (int64_t k = 0; k < nb; ++k) wv[k] = wp[k][kh * g.KW + kw];
          // Rows that line up in input and output (stride 1, full width) form one contiguous run.
          const bool contiguous = g.sh == 1 && g.sw == 1 && g.OW == g.W && wshift == 0;
          const int64_t rows = contiguous ? 1 : h1 - h0;
          const int64_t len = contiguous ? (h1 - h0) * g.OW : w1 - w0;
          const int64_t step = contiguous ? 1 : g.sw;
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t oh = h0 + r;
            T* orow = op + oh * g.OW + w0;
            const int64_t in_off = (oh * g.sh + hshift) * g.W + w0 * g.sw + wshift;
            if (nb == kBlock) {
              accumulate_block<T>(orow, len, step, in_off, ip, wv);
            } else {
              for (int64_t k = 0; k < nb; ++k) {
                const T* irow = ip[k] + in_off;
                for (int64_t i = 0; i < len; ++i) orow[i] += wv[k] * irow[i * step];
              }
            }
          }
        }
      }
    }
  }
}

// Transposed convolution as the scatter of each input pixel through the kernel; one thread per
// output plane so that no two threads write the same element.
template <typename T>
void conv2d_transpose_impl(const ConvGeom& g, const T* x, const T* w, const T* bias, T* out) {
  const int64_t Og = g.O / g.G;  // output channels per group
  const int64_t Cg = g.C / g.G;  // input channels per group
  const int64_t plane = g.OH * g.OW;
#pragma omp parallel for schedule(dynamic)
  for (int64_t no = 0; no < g.N * g.O; ++no) {
    const int64_t n = no / g.O, o = no % g.O, grp = o / Og, ol = o % Og;
    T* op = out + no * plane;
    const T b0 = bias ? bias[o] : T(0);
    for (int64_t i = 0; i < plane; ++i) op[i] = b0;
    for (int64_t icl = 0; icl < Cg; ++icl) {
      const int64_t ic = grp * Cg + icl;
      const T* ip = x + (n * g.C + ic) * g.H * g.W;
      const T* wp = w + (ic * Og + ol) * g.KH * g.KW;
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        // oh = ih * sh + hshift
        const int64_t hshift = kh * g.dh - g.pt;
        const int64_t ih_lo = std::max<int64_t>(0, ceil_div(-hshift, g.sh));
        const int64_t ih_hi = std::min<int64_t>(g.H, floor_div(g.OH - 1 - hshift, g.sh) + 1);
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const T wv = wp[kh * g.KW + kw];
          const int64_t wshift = kw * g.dw - g.pl;
          const int64_t iw_lo = std::max<int64_t>(0, ceil_div(-wshift, g.sw));
          const int64_t iw_hi = std::min<int64_t>(g.W, floor_div(g.OW - 1 - wshift, g.sw) + 1);
          for (int64_t ih = ih_lo; ih < ih_hi; ++ih) {
            const T* irow = ip + ih * g.W;
            T* orow = op + (ih * g.sh + hshift) * g.OW;
            for (int64_t iw = iw_lo; iw < iw_hi; ++iw) orow[iw * g.sw + wshift] += wv * irow[iw];
          }
        }
      }
    }
  }
}

ConvGeom geometry(const Tensor& x, const Tensor& w, const Tensor& out, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
  SY_CHECK(x.ndim() == 4 && w.ndim() == 4 && out.ndim() == 4) << "conv expects 4-d data, weight and output";
  ConvGeom g{};
  g.N = x.shape()[0]; g.C = x.shape()[1]; g.H = x.shape()[2]; g.W = x.shape()[3];
  g.O = w.shape()[0]; g.Cg = w.shape()[1]; g.KH = w.shape()[2]; g.KW = w.shape()[3];
  g.OH = out.shape()[2]; g.OW = out.shape()[3];
  g.G = groups;
  g.sh = strides[0]; g.sw = strides[1];
  g.pt = padding[0]; g.pl = padding[1];
  g.dh = dilation[0]; g.dw = dilation[1];
  return g;
}

const Tensor* optional_bias(const Args& args, int64_t channels, const char* op) {
  if (args.size() < 3) return nullptr;
  const Tensor& b = args[2];
  SY_CHECK(b.numel() == channels) << op << ": bias has " << b.numel() << " elements for " << channels << " channels";
  return &b;
}

}  // namespace

Tensor conv2d(const ops::Conv2dAttrs& a, const Args& args, const ir::Type& out_type) {
  check_conv_attrs("nn.conv2d", a.strides, a.padding, a.dilation, a.groups);
  const Tensor& x = args.at(0);
  const Tensor& w = args.at(1);
  Tensor out = make_output(out_type);
  ConvGeom g = geometry(x, w, out, a.strides, a.padding, a.dilation, a.groups);
  SY_CHECK(g.C == g.Cg * g.G && g.O % g.G == 0 && out.shape()[1] == g.O && out.shape()[0] == g.N)
      << "nn.conv2d: inconsistent shapes " << shape_str(x.shape()) << " * " << shape_str(w.shape()) << " -> "
      << shape_str(out.shape()) << " with groups " << g.G;
  SY_CHECK(x.dtype() == w.dtype() && out.dtype() == x.dtype()) << "nn.conv2d: dtype mismatch";
  const Tensor* bias = optional_bias(args, g.O, "nn.conv2d");
  if (x.dtype() == DType::f32) {
    conv2d_impl<float>(g, ptr<float>(x), ptr<float>(w), bias ? ptr<float>(*bias) : nullptr, ptr<float>(out));
  } else if (x.dtype() == DType::f64) {
    conv2d_impl<double>(g, ptr<double>(x), ptr<double>(w), bias ? ptr<double>(*bias) : nullptr, ptr<double>(out));
  } else {
    throw Error(std::string("nn.conv2d: unsupported dtype ") + std::string(dtype_name(x.dtype())));
  }
  return out;
}

Tensor conv2d_transpose(const ops::ConvTranspose2dAttrs& a, const Args& args, const ir::Type& out_type) {
  check_conv_attrs("nn.conv2d_transpose", a.strides, a.padding, a.dilation, a.groups);
  const Tensor& x = args.at(0);
  const Tensor& w = args.at(1);
  Tensor out = make_output(out_type);
  ConvGeom g = geometry(x, w, out, a.strides, a.padding, a.dilation, a.groups);
  // Weight is [C_in, C_out / groups, KH, KW].
  g.O = out.shape()[1];
  SY_CHECK(w.shape()[0] == g.C && g.C % g.G == 0 && g.O == w.shape()[1] * g.G && out.shape()[0] == g.N)
      << "nn.conv2d_transpose: inconsistent shapes " << shape_str(x.shape()) << " * " << shape_str(w.shape())
      << " -> " << shape_str(out.shape()) << " with groups " << g.G;
  SY_CHECK(x.dtype() == w.dtype() && out.dtype() == x.dtype()) << "nn.conv2d_transpose: dtype mismatch";
  const Tensor* bias = optional_bias(args, g.O, "nn.conv2d_transpose");
  if (x.dtype() == DType::f32) {
    conv2d_transpose_impl<float>(g, ptr<float>(x), ptr<float>(w), bias ? ptr<float>(*bias) : nullptr,
                                 ptr<float>(out));
  } else if (x.dtype() == DType::f64) {
    conv2d_transpose_impl<double>(g, ptr<double>(x), ptr<double>(w), bias ? ptr<double>(*bias) : nullptr,
                                  ptr<double>(out));
  } else {
    throw Error(std::string("nn.conv2d_transpose: unsupported dtype ") + std::string(dtype_name(x.dtype())));
  }
  return out;
}

}  // namespace sy::reference::detail
