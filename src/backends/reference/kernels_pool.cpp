// Reference kernels of 2-D pooling (max, average, Lp; padding, dilation, ceil mode) and global pooling.
#include <cmath>
#include <limits>
#include <sstream>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

using ops::OpCode;

template <typename T>
void pool_impl(OpCode op, const ops::Pool2dAttrs& a, const Tensor& x, Tensor& out) {
  const int64_t NC = x.shape()[0] * x.shape()[1];
  const int64_t H = x.shape()[2], W = x.shape()[3];
  const int64_t OH = out.shape()[2], OW = out.shape()[3];
  const int64_t KH = a.kernel[0], KW = a.kernel[1];
  const int64_t sh = a.strides[0], sw = a.strides[1];
  const int64_t pt = a.padding[0], pl = a.padding[1], pb = a.padding[2], pr = a.padding[3];
  const int64_t dh = a.dilation[0], dw = a.dilation[1];
  const double p = static_cast<double>(a.p);
  const T* in = ptr<T>(x);
  T* o = ptr<T>(out);
#pragma omp parallel for if (out.numel() * KH * KW > kParallelGrain)
  for (int64_t nc = 0; nc < NC; ++nc) {
    const T* plane = in + nc * H * W;
    T* oplane = o + nc * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t h0 = oh * sh - pt, w0 = ow * sw - pl;
        double acc = op == OpCode::MaxPool2d ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t valid = 0, in_padded = 0;
        for (int64_t kh = 0; kh < KH; ++kh) {
          const int64_t ih = h0 + kh * dh;
          const bool h_in_pad = ih >= -pt && ih < H + pb;
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t iw = w0 + kw * dw;
            if (h_in_pad && iw >= -pl && iw < W + pr) ++in_padded;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            ++valid;
            const double v = static_cast<double>(plane[ih * W + iw]);
            switch (op) {
              case OpCode::MaxPool2d: if (v > acc) acc = v; break;  // NaN is skipped, as ONNX's reference
              case OpCode::AvgPool2d: acc += v; break;
              default: acc += std::pow(std::abs(v), p); break;
            }
          }
        }
        double r;
        if (op == OpCode::MaxPool2d) {
          r = acc;
        } else if (op == OpCode::AvgPool2d) {
          const int64_t count = a.count_include_pad ? in_padded : valid;
          r = count > 0 ? acc / static_cast<double>(count) : 0.0;
        } else {
          r = std::pow(acc, 1.0 / p);
        }
        oplane[oh * OW + ow] = static_cast<T>(r);
      }
    }
  }
}

template <typename T>
void global_pool_impl(OpCode op, const Tensor& x, Tensor& out) {
  const int64_t NC = x.shape()[0] * x.shape()[1];
  const int64_t S = dims_product(x.shape(), 2, x.shape().size());
  const T* in = ptr<T>(x);
  T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
  for (int64_t nc = 0; nc < NC; ++nc) {
    const T* plane = in + nc * S;
    if (op == OpCode::GlobalMaxPool2d) {
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t i = 0; i < S; ++i) {
        if (std::isnan(plane[i])) { m = plane[i]; break; }  // np.max propagates NaN
        if (plane[i] > m) m = plane[i];
      }
      o[nc] = m;
    } else {
      double s = 0.0;
      for (int64_t i = 0; i < S; ++i) s += static_cast<double>(plane[i]);
      o[nc] = static_cast<T>(s / static_cast<double>(S));
    }
  }
}

}  // namespace

Tensor pool2d(OpCode op, const ops::Pool2dAttrs& a, const Tensor& x, const ir::Type& out_type) {
  const std::string& name = ops::op_name(op);
  if (a.kernel.size() != 2 || a.strides.size() != 2 || a.padding.size() != 4 || a.dilation.size() != 2)
    throw Error(name + ": expects 2 kernel sizes, 2 strides, 4 paddings and 2 dilations");
  for (int i = 0; i < 2; ++i)
    if (a.kernel[i] < 1 || a.strides[i] < 1 || a.dilation[i] < 1)
      throw Error(name + ": kernel, strides and dilation must be positive");
  if (op == OpCode::LpPool2d && a.p <= 0) throw Error(name + ": p must be positive");
  Tensor out = make_output(out_type);
  SY_CHECK(x.ndim() == 4 && out.ndim() == 4 && out.shape()[0] == x.shape()[0] && out.shape()[1] == x.shape()[1])
      << name << ": expects NCHW data, got " << shape_str(x.shape()) << " -> " << shape_str(out.shape());
  if (x.dtype() == DType::f32) pool_impl<float>(op, a, x, out);
  else if (x.dtype() == DType::f64) pool_impl<double>(op, a, x, out);
  else if (op == OpCode::MaxPool2d && is_integer(x.dtype()))  // ONNX MaxPool-12 takes int8/uint8
    dispatch_dtype(x.dtype(), [&](auto tag) { pool_impl<decltype(tag)>(op, a, x, out); });
  else throw Error(name + ": unsupported dtype " + std::string(dtype_name(x.dtype())));
  return out;
}

Tensor global_pool2d(OpCode op, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(x.ndim() >= 2 && out.numel() == x.shape()[0] * x.shape()[1])
      << ops::op_name(op) << ": expects N, C, spatial... data, got " << shape_str(x.shape());
  if (x.dtype() == DType::f32) global_pool_impl<float>(op, x, out);
  else if (x.dtype() == DType::f64) global_pool_impl<double>(op, x, out);
  else throw Error(ops::op_name(op) + ": unsupported dtype " + std::string(dtype_name(x.dtype())));
  return out;
}

}  // namespace sy::reference::detail
