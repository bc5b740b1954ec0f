// Reference kernels of normalisations: batch, layer and instance norm, LRN, softmax, log-softmax.
#include <cmath>
#include <limits>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

void require_float(const Tensor& x, const char* op) {
  if (x.dtype() != DType::f32 && x.dtype() != DType::f64)
    throw Error(std::string(op) + ": unsupported dtype " + std::string(dtype_name(x.dtype())));
}

// Calls f(T{}) with T = float or double according to x's dtype.
template <typename F>
void dispatch_float(const Tensor& x, const char* op, F&& f) {
  require_float(x, op);
  if (x.dtype() == DType::f32) f(float{});
  else f(double{});
}

// Per-channel parameter as double (channel c of a [C] tensor).
std::vector<double> as_doubles(const Tensor& t, int64_t expected, const char* op, const char* what) {
  if (t.numel() != expected)
    throw Error(std::string(op) + ": " + what + " has " + std::to_string(t.numel()) + " elements, expected " +
                std::to_string(expected));
  std::vector<double> v(static_cast<size_t>(expected));
  for (int64_t i = 0; i < expected; ++i) v[static_cast<size_t>(i)] = t.get_as_double(i);
  return v;
}

// t broadcast to `shape` and materialised as doubles.
std::vector<double> broadcast_doubles(const Tensor& t, const Shape& shape) {
  Tensor full(t.dtype(), shape);
  strided_gather(full.raw(), t.raw(), dtype_size(t.dtype()), shape, broadcast_strides(t.shape(), shape), 0);
  std::vector<double> v(static_cast<size_t>(full.numel()));
  for (int64_t i = 0; i < full.numel(); ++i) v[static_cast<size_t>(i)] = full.get_as_double(i);
  return v;
}

// Mean and population variance of n values, two-pass in double.
template <typename T>
void moments(const T* p, int64_t n, int64_t stride, double& mean, double& var) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(p[i * stride]);
  mean = n > 0 ? s / static_cast<double>(n) : 0.0;
  double q = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(p[i * stride]) - mean;
    q += d * d;
  }
  var = n > 0 ? q / static_cast<double>(n) : 0.0;
}

}  // namespace

Tensor batch_norm(const ops::BatchNormAttrs& a, const Args& args, const ir::Type& out_type) {
  const Tensor& x = args.at(0);
  Tensor out = make_output(out_type);
  const int64_t caxis = x.ndim() >= 2 ? 1 : 0;
  const int64_t C = x.ndim() >= 1 ? x.shape()[static_cast<size_t>(caxis)] : 1;
  const int64_t inner = dims_product(x.shape(), static_cast<size_t>(caxis) + 1, x.shape().size());
  const int64_t outer = caxis == 1 ? x.shape()[0] : 1;
  std::vector<double> scale = as_doubles(args.at(1), C, "nn.batch_norm", "scale");
  std::vector<double> bias = as_doubles(args.at(2), C, "nn.batch_norm", "bias");
  std::vector<double> mean = as_doubles(args.at(3), C, "nn.batch_norm", "mean");
  std::vector<double> var = as_doubles(args.at(4), C, "nn.batch_norm", "variance");
  std::vector<double> mul(static_cast<size_t>(C));
  for (size_t c = 0; c < mul.size(); ++c) mul[c] = scale[c] / std::sqrt(var[c] + a.epsilon);
  dispatch_float(x, "nn.batch_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t oc = 0; oc < outer * C; ++oc) {
      const size_t c = static_cast<size_t>(oc % C);
      const T m = static_cast<T>(mean[c]), k = static_cast<T>(mul[c]), b = static_cast<T>(bias[c]);
      const T* src = in + oc * inner;
      T* dst = o + oc * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = (src[i] - m) * k + b;
    }
  });
  return out;
}

Tensor layer_norm(const ops::LayerNormAttrs& a, const Args& args, const ir::Type& out_type) {
  const Tensor& x = args.at(0);
  Tensor out = make_output(out_type);
  if (a.axis < 0 || a.axis >= x.ndim())
    throw Error("nn.layer_norm: axis " + std::to_string(a.axis) + " out of range for rank " + std::to_string(x.ndim()));
  const size_t axis = static_cast<size_t>(a.axis);
  const Shape norm_shape(x.shape().begin() + static_cast<std::ptrdiff_t>(axis), x.shape().end());
  const int64_t inner = shape_numel(norm_shape);
  const int64_t outer = dims_product(x.shape(), 0, axis);
  std::vector<double> scale = broadcast_doubles(args.at(1), norm_shape);
  std::vector<double> bias = args.size() > 2 ? broadcast_doubles(args[2], norm_shape)
                                             : std::vector<double>(static_cast<size_t>(inner), 0.0);
  dispatch_float(x, "nn.layer_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t r = 0; r < outer; ++r) {
      const T* src = in + r * inner;
      T* dst = o + r * inner;
      double mean, var;
      moments(src, inner, 1, mean, var);
      const double inv = 1.0 / std::sqrt(var + a.epsilon);
      for (int64_t i = 0; i < inner; ++i) {
        const size_t k = static_cast<size_t>(i);
        dst[i] = static_cast<T>((static_cast<double>(src[i]) - mean) * inv * scale[k] + bias[k]);
      }
    }
  });
  return out;
}

Tensor instance_norm(const ops::EpsilonAttrs& a, const Args& args, const ir::Type& out_type) {
  const Tensor& x = args.at(0);
  Tensor out = make_output(out_type);
  if (x.ndim() < 2) throw Error("nn.instance_norm: expects N, C, ... data, got " + shape_str(x.shape()));
  const int64_t C = x.shape()[1];
  const int64_t NC = x.shape()[0] * C;
  const int64_t S = dims_product(x.shape(), 2, x.shape().size());
  std::vector<double> scale = as_doubles(args.at(1), C, "nn.instance_norm", "scale");
  std::vector<double> bias = as_doubles(args.at(2), C, "nn.instance_norm", "bias");
  dispatch_float(x, "nn.instance_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t nc = 0; nc < NC; ++nc) {
      const size_t c = static_cast<size_t>(nc % C);
      const T* src = in + nc * S;
      T* dst = o + nc * S;
      double mean, var;
      moments(src, S, 1, mean, var);
      const double k = scale[c] / std::sqrt(var + a.epsilon);
      for (int64_t i = 0; i < S; ++i)
        dst[i] = static_cast<T>((static_cast<double>(src[i]) - mean) * k + bias[c]);
    }
  });
  return out;
}

Tensor lrn(const ops::LRNAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  if (x.ndim() < 2) throw Error("nn.lrn: expects N, C, ... data, got " + shape_str(x.shape()));
  if (a.size < 1) throw Error("nn.lrn: size must be positive");
  const int64_t N = x.shape()[0], C = x.shape()[1];
  const int64_t S = dims_product(x.shape(), 2, x.shape().size());
  const int64_t before = (a.size - 1) / 2, after = a.size - 1 - before;  // floor and ceil of (size-1)/2
  const double k = a.alpha / static_cast<double>(a.size);
  dispatch_float(x, "nn.lrn", [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() * a.size > kParallelGrain)
    for (int64_t nc = 0; nc < N * C; ++nc) {
      const int64_t n = nc / C, c = nc % C;
      const int64_t c0 = std::max<int64_t>(0, c - before), c1 = std::min<int64_t>(C - 1, c + after);
      for (int64_t s = 0; s < S; ++s) {
        double sq = 0.0;
        for (int64_t j = c0; j <= c1; ++j) {
          const double v = static_cast<double>(in[(n * C + j) * S + s]);
          sq += v * v;
        }
        const double v = static_cast<double>(in[nc * S + s]);
        o[nc * S + s] = static_cast<T>(v / std::pow(a.bias + k * sq, a.beta));
      }
    }
  });
  return out;
}

Tensor softmax(bool log, const ops::AxisAttrs& a, const Tensor& x, const ir::Type& out_type) {
  const char* name = log ? "nn.log_softmax" : "nn.softmax";
  Tensor out = make_output(out_type);
  if (a.axis < 0 || a.axis >= std::max<int64_t>(x.ndim(), 1))
    throw Error(std::string(name) + ": axis " + std::to_string(a.axis) + " out of range for rank " +
                std::to_string(x.ndim()));
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t D = x.ndim() == 0 ? 1 : x.shape()[axis];
  const int64_t outer = dims_product(x.shape(), 0, axis);
  const int64_t inner = dims_product(x.shape(), axis + 1, x.shape().size());
  dispatch_float(x, name, [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t oi = 0; oi < outer * inner; ++oi) {
      const int64_t base = (oi / inner) * D * inner + oi % inner;
      const T* src = in + base;
      T* dst = o + base;
      // Subtracting the maximum keeps exp from overflowing.
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t d = 0; d < D; ++d) m = std::max(m, src[d * inner]);
      double sum = 0.0;
      for (int64_t d = 0; d < D; ++d) sum += std::exp(static_cast<double>(src[d * inner] - m));
      if (log) {
        const double ls = std::log(sum);
        for (int64_t d = 0; d < D; ++d) dst[d * inner] = static_cast<T>(static_cast<double>(src[d * inner] - m) - ls);
      } else {
        for (int64_t d = 0; d < D; ++d)
          dst[d * inner] = static_cast<T>(std::exp(static_cast<double>(src[d * inner] - m)) / sum);
      }
    }
  });
  return out;
}

}  // namespace sy::reference::detail
