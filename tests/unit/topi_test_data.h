// Test data for the topi op tests: seeded random tensors of any dtype, and tensors from values.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "support/tensor.h"

namespace sy::topitest {

// Values uniform in [lo, hi] (integers: rounded; bool: 0/1), seeded per call site.
inline Tensor random(DType t, Shape s, double lo, double hi, uint32_t seed = 1) {
  Tensor x(t, std::move(s));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  dispatch_dtype(t, [&]<typename T>(T) {
    T* p = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = u(gen);
      if constexpr (std::is_same_v<T, bool>) p[i] = v > (lo + hi) / 2;
      else if constexpr (std::is_floating_point_v<T>) p[i] = static_cast<T>(v);
      else p[i] = static_cast<T>(std::llround(v));
    }
  });
  return x;
}

// A tensor of dtype t holding the given values (converted with static_cast).
inline Tensor values(DType t, Shape s, const std::vector<double>& v) {
  Tensor x(t, std::move(s));
  dispatch_dtype(t, [&]<typename T>(T) {
    T* p = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<T>(v[static_cast<size_t>(i) % v.size()]);
  });
  return x;
}

inline constexpr DType kNumeric[] = {DType::f32, DType::f64, DType::i8, DType::i16, DType::i32, DType::i64, DType::u8};
inline constexpr DType kFloats[] = {DType::f32, DType::f64};

}  // namespace sy::topitest
