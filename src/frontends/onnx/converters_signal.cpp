// Converters of the ONNX window generators (HannWindow, HammingWindow, BlackmanWindow): their
// size input must be static, so each becomes a constant.
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

}  // namespace

void register_signal_converters(ConverterTable& t) {
  t.add("HannWindow", 17, window<1, 1, 0, 2>);
  t.add("HammingWindow", 17, window<25, 21, 0, 46>);
  t.add("BlackmanWindow", 17, window<42, 50, 8, 100>);
}

}  // namespace sy::onnx
