#include "support/random_tensor.h"

#include <type_traits>

#include "support/rng.h"

namespace sy {

Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed) {
  Tensor t(dtype, shape);
  Rng rng(seed);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.raw());
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, bool>) p[i] = (rng.next() >> 63) != 0;
      else if constexpr (std::is_floating_point_v<T>) p[i] = static_cast<T>(rng.uniform(-1.0, 1.0));
      else p[i] = static_cast<T>(rng.next() % 10);
    }
  });
  return t;
}

}  // namespace sy
