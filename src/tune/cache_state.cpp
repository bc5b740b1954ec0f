// The caches as a model leaves them for one of its kernels.
#include "tune/cache_state.h"

#include <emmintrin.h>
#include <omp.h>

#include <cstdint>
#include <cstring>

namespace sy::tune {

CacheState::CacheState(std::vector<Span> inputs, std::vector<Span> flush, std::vector<Span> outputs, size_t sweep_bytes)
    : inputs_(std::move(inputs)), flush_(std::move(flush)), outputs_(std::move(outputs)) {
  for (const auto& [p, n] : inputs_) pristine_.emplace_back(static_cast<const unsigned char*>(p), static_cast<const unsigned char*>(p) + n);
  if (sweep_bytes > 0) {
    // One per process, kept: made again per state, its pages' first touch cost more than the runs.
    static std::vector<unsigned char> sweep;
    if (sweep.size() < sweep_bytes) sweep.assign(sweep_bytes, 1);
    sweep_ = &sweep;
  }
}

namespace {

// Calls f with one address in each cache line of [p + lo, p + hi), every address inside it.
template <typename F>
void each_line(const void* p, size_t lo, size_t hi, F f) {
  const unsigned char* const end = static_cast<const unsigned char*>(p) + hi;
  for (const unsigned char* a = static_cast<const unsigned char*>(p) + lo; a < end;
       a = reinterpret_cast<const unsigned char*>((reinterpret_cast<uintptr_t>(a) | 63) + 1))
    f(a);
}

}  // namespace

void CacheState::prime() const {
#pragma omp parallel
  {
    const size_t n = static_cast<size_t>(omp_get_num_threads()), t = static_cast<size_t>(omp_get_thread_num());
    auto share = [n](size_t bytes, size_t who) { return std::pair{bytes * who / n, bytes * (who + 1) / n}; };
    unsigned sum = 0;
    if (sweep_) {
      const auto [lo, hi] = share(sweep_->size(), t);
      each_line(sweep_->data(), lo, hi, [&](const unsigned char* a) { sum += *a; });
    }
    for (const auto& [p, bytes] : flush_) {
      const auto [lo, hi] = share(bytes, t);
      each_line(p, lo, hi, [](const unsigned char* a) { _mm_clflush(a); });
    }
    _mm_mfence();
    for (size_t k = 0; k < pristine_.size(); ++k) {
      const auto [lo, hi] = share(pristine_[k].size(), t);
      std::memcpy(static_cast<unsigned char*>(inputs_[k].first) + lo, pristine_[k].data() + lo, hi - lo);
    }
    for (const auto& [p, bytes] : outputs_) {
      const auto [lo, hi] = share(bytes, (t + 1) % n);
      each_line(p, lo, hi, [&](const unsigned char* a) { sum += *a; });
    }
#pragma omp atomic
    sink_ += sum;
  }
}

}  // namespace sy::tune
