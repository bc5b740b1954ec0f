// Converters of the ONNX signal ops. The window generators (HannWindow, HammingWindow,
// BlackmanWindow) and MelWeightMatrix take static inputs, so each becomes a constant. DFT and
// STFT become a matrix product with a constant matrix of cosines and sines: O(n^2) where an FFT
// is O(n log n), but it runs on every backend's matmul, at its speed, and an audio front-end's
// frames (n <= 2048) keep it small (a 512-point frame is 0.26 MFLOP).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "frontends/onnx/converters.h"
#include "frontends/onnx/tensor_proto.h"

namespace sy::onnx {

namespace {

using Outs = std::vector<ir::Expr>;

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1.
template <int A0, int A1, int A2, int Denominator>
Outs window(NodeContext& c) {
  Tensor size = c.const_input(0, "size");
  if (size.numel() != 1 || !is_integer(size.dtype())) c.fail("size must be an integer scalar");
  int64_t n = size.get_as_int(0);
  if (n < 0 || n > (int64_t{1} << 28)) c.fail("size " + std::to_string(n) + " is out of range");
  auto onnx_type = static_cast<int32_t>(c.attr_int("output_datatype", 1));
  auto dt = dtype_from_onnx(onnx_type);
  if (!dt) c.unsupported("dtype " + onnx_dtype_name(onnx_type) + " (output_datatype)");
  double N = static_cast<double>(c.attr_int("periodic", 1) ? n : n - 1);
  const double a0 = double(A0) / Denominator, a1 = double(A1) / Denominator, a2 = double(A2) / Denominator;
  Tensor t(*dt, {n});
  dispatch_dtype(*dt, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      double x = N > 0 ? 2 * std::numbers::pi * static_cast<double>(i) / N : 0.0;
      p[i] = static_cast<T>(a0 - a1 * std::cos(x) + a2 * std::cos(2 * x));
    }
  });
  return {ir::constant(t)};
}


// Takes a signal flattened with its component axis ([t][c], c = 1 real or 2 complex) to the
// transform's [bin][re, im]. Forward: X_k = sum_t x_t e^(-2 pi i k t / n); inverse: e^(+...) / n.
// The angle's k * t is reduced mod n in integers, so a large product loses nothing.
Tensor dft_matrix(DType dt, int64_t n, int64_t comps, int64_t bins, bool inverse) {
  Tensor m(dt, {n * comps, bins * 2});
  const double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T* p = m.data<T>();
    for (int64_t t = 0; t < n; ++t)
      for (int64_t k = 0; k < bins; ++k) {
        const double angle = 2 * std::numbers::pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
        const double co = std::cos(angle) * scale, si = sign * std::sin(angle) * scale;
        // (a + ib)(cos + i si) = (a cos - b si) + i (b cos + a si)
        T* re_row = p + (t * comps) * bins * 2;
        re_row[2 * k] = static_cast<T>(co);
        re_row[2 * k + 1] = static_cast<T>(si);
        if (comps == 2) {
          T* im_row = re_row + bins * 2;
          im_row[2 * k] = static_cast<T>(-si);
          im_row[2 * k + 1] = static_cast<T>(co);
        }
      }
  });
  return m;
}

int64_t static_scalar(NodeContext& c, size_t i, std::string_view role) {
  Tensor t = c.const_input(i, role);
  if (t.numel() != 1 || !is_integer(t.dtype())) c.fail(std::string(role) + " must be an integer scalar");
  return t.get_as_int(0);
}

void require_float_signal(NodeContext& c, DType dt, std::string_view role) {
  if (dt != DType::f32 && dt != DType::f64)
    c.unsupported(c.op_type() + " " + std::string(role) + " of dtype " + std::string(dtype_name(dt)) + " (float32/64 only)");
}

// [rows, n * comps] times the DFT matrix, reshaped to [out_shape..., bins, 2].
ir::Expr times_dft_matrix(NodeContext& c, const ir::Expr& rows, DType dt, int64_t n, int64_t comps, int64_t bins,
                          bool inverse, Shape out_shape) {
  ir::Expr y = c.op(ops::OpCode::MatMul, {rows, ir::constant(dft_matrix(dt, n, comps, bins, inverse))});
  out_shape.push_back(bins);
  out_shape.push_back(2);
  return c.reshape(y, out_shape);
}

// DFT-17: the transform along `axis` of a signal whose last axis holds (re) or (re, im); the
// signal zero-padded or cut to dft_length; onesided keeps bins 0..n/2 of a real signal.
Outs convert_dft(NodeContext& c) {
  ir::Expr x = c.input(0, "input");
  const Shape xs = c.shape(0, "input");
  const DType dt = c.dtype(0, "input");
  require_float_signal(c, dt, "input");
  const int64_t r = static_cast<int64_t>(xs.size());
  if (r < 2 || (xs.back() != 1 && xs.back() != 2))
    c.fail("input must end in an axis of 1 (real) or 2 (complex) values, got shape " + shape_str(xs));
  const int64_t comps = xs.back();
  const int64_t axis = c.axis(c.attr_int("axis", 1), r);
  if (axis == r - 1) c.fail("axis " + std::to_string(axis) + " is the (re, im) axis");
  const bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
  if (onesided && (comps == 2 || inverse))
    c.fail(std::string("onesided needs a real forward transform; this one is ") + (comps == 2 ? "complex" : "inverse"));
  int64_t n = xs[static_cast<size_t>(axis)];
  if (c.has_input(1)) {
    const int64_t len = static_scalar(c, 1, "dft_length");
    if (len < 1) c.fail("dft_length " + std::to_string(len) + " must be positive");
    if (len != n) {
      ops::PadAttrs pad;
      pad.pads.assign(static_cast<size_t>(2 * r), 0);
      pad.pads[static_cast<size_t>(axis + r)] = len - n;  // negative: cut
      x = c.op(ops::OpCode::Pad, {x}, pad);
      n = len;
    }
  }
  if (n > (int64_t{1} << 14)) c.unsupported("DFT of " + std::to_string(n) + " points (at most 16384: a dense matrix)");
  const int64_t bins = onesided ? n / 2 + 1 : n;
  // The signal axis moved next to the component axis, the rest flattened into rows.
  std::vector<int64_t> perm;
  Shape outer;
  for (int64_t i = 0; i < r - 1; ++i)
    if (i != axis) perm.push_back(i), outer.push_back(xs[static_cast<size_t>(i)]);
  perm.push_back(axis);
  perm.push_back(r - 1);
  int64_t rows = 1;
  for (int64_t d : outer) rows *= d;
  ir::Expr flat = c.reshape(c.transpose(x, perm), {rows, n * comps});
  ir::Expr y = times_dft_matrix(c, flat, dt, n, comps, bins, inverse, outer);
  std::vector<int64_t> back(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) back[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
  return {c.transpose(y, back)};
}

// STFT-17: frames of frame_length samples every frame_step, each multiplied by the window (a
// constant or a runtime tensor) and transformed: [batch, frames, bins, 2].
Outs convert_stft(NodeContext& c) {
  ir::Expr sig = c.input(0, "signal");
  const Shape ss = c.shape(0, "signal");
  const DType dt = c.dtype(0, "signal");
  require_float_signal(c, dt, "signal");
  if (ss.size() != 3 || (ss[2] != 1 && ss[2] != 2))
    c.fail("signal must be [batch, length, 1 or 2], got shape " + shape_str(ss));
  const int64_t comps = ss[2], length = ss[1];
  const int64_t step = static_scalar(c, 1, "frame_step");
  if (step < 1) c.fail("frame_step " + std::to_string(step) + " must be positive");
  ir::Expr window = c.optional_input(2);
  int64_t n = -1;
  if (window) {
    const Shape& ws = c.shape(2, "window");
    if (ws.size() != 1) c.fail("window must be 1-D, got shape " + shape_str(ws));
    require_float_signal(c, c.dtype(2, "window"), "window");
    n = ws[0];
  }
  if (c.has_input(3)) {
    const int64_t len = static_scalar(c, 3, "frame_length");
    if (n >= 0 && len != n)
      c.fail("frame_length " + std::to_string(len) + " differs from the window's " + std::to_string(n) + " samples");
    n = len;
  }
  if (n < 0) c.fail("needs a window or a frame_length");
  if (n < 1 || n > length)
    c.fail("frame of " + std::to_string(n) + " samples for a signal of " + std::to_string(length));
  if (n > (int64_t{1} << 14)) c.unsupported("STFT of " + std::to_string(n) + "-sample frames (at most 16384)");
  const bool onesided = c.attr_int("onesided", 1) != 0;
  if (onesided && comps == 2) c.fail("onesided needs a real signal; this one is complex");
  const int64_t frames = (length - n) / step + 1, bins = onesided ? n / 2 + 1 : n;
  std::vector<int64_t> idx(static_cast<size_t>(frames * n));
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < n; ++j) idx[static_cast<size_t>(f * n + j)] = f * step + j;
  ops::AxisAttrs along_time;
  along_time.axis = 1;
  ir::Expr framed = c.op(ops::OpCode::Gather, {sig, ir::constant(Tensor::from_vector<int64_t>({frames, n}, idx))},
                         along_time);  // [batch, frames, n, comps]
  if (window) framed = c.op(ops::OpCode::Mul, {framed, c.reshape(c.cast(window, dt), {n, 1})});
  ir::Expr flat = c.reshape(framed, {ss[0] * frames, n * comps});
  return {times_dft_matrix(c, flat, dt, n, comps, bins, false, {ss[0], frames})};
}

// MelWeightMatrix-17: [dft_length / 2 + 1, num_mel_bins] triangles on the mel scale, as the
// operator's definition in ONNX computes them (its band edges floor((dft_length + 1) f / rate)).
Outs convert_mel_weight_matrix(NodeContext& c) {
  const int64_t mels = static_scalar(c, 0, "num_mel_bins"), dft_length = static_scalar(c, 1, "dft_length");
  const int64_t rate = static_scalar(c, 2, "sample_rate");
  auto edge = [&](size_t i, std::string_view role) {
    Tensor t = c.const_input(i, role);
    if (t.numel() != 1) c.fail(std::string(role) + " must be a scalar");
    return t.get_as_double(0);
  };
  const double lower = edge(3, "lower_edge_hertz"), upper = edge(4, "upper_edge_hertz");
  if (mels < 1 || mels > 4096) c.fail("num_mel_bins " + std::to_string(mels) + " is out of range (1..4096)");
  if (dft_length < 1 || dft_length > (int64_t{1} << 20)) c.fail("dft_length " + std::to_string(dft_length) + " is out of range");
  if (rate < 1) c.fail("sample_rate " + std::to_string(rate) + " must be positive");
  if (!(lower >= 0 && lower < upper && upper <= static_cast<double>(rate) / 2))
    c.fail("the edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2");
  auto onnx_type = static_cast<int32_t>(c.attr_int("output_datatype", 1));
  auto dt = dtype_from_onnx(onnx_type);
  if (!dt) c.unsupported("dtype " + onnx_dtype_name(onnx_type) + " (output_datatype)");
  const int64_t spectrum = dft_length / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double low_mel = mel(lower), step = (mel(upper) - low_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edges(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595) - 1);
    edges[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> w(static_cast<size_t>(spectrum * mels), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return w[static_cast<size_t>(std::clamp<int64_t>(j, 0, spectrum - 1) * mels + i)]; };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t lo = edges[static_cast<size_t>(i)], mid = edges[static_cast<size_t>(i + 1)], hi = edges[static_cast<size_t>(i + 2)];
    if (mid == lo) at(mid, i) = 1;
    for (int64_t j = lo; mid > lo && j <= mid; ++j) at(j, i) = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
    for (int64_t j = mid; hi > mid && j < hi; ++j) at(j, i) = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
  }
  Tensor t(*dt, {spectrum, mels});
  dispatch_dtype(*dt, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < w.size(); ++i) t.data<T>()[i] = static_cast<T>(w[i]);
  });
  return {ir::constant(t)};
}

}  // namespace

void register_signal_converters(ConverterTable& t) {
  t.add("DFT", 17, convert_dft);
  t.add("STFT", 17, convert_stft);
  t.add("MelWeightMatrix", 17, convert_mel_weight_matrix);
  t.add("HannWindow", 17, window<1, 1, 0, 2>);
  t.add("HammingWindow", 17, window<25, 21, 0, 46>);
  t.add("BlackmanWindow", 17, window<42, 50, 8, 100>);
}

}  // namespace sy::onnx
