// Tests of CacheState: what a timed run finds before it is made again without changing any data.
#include <gtest/gtest.h>
#include <omp.h>

#include <numeric>
#include <vector>

#include "tune/cache_state.h"

using sy::tune::CacheState;

namespace {

std::vector<unsigned char> iota_bytes(size_t n, unsigned char first) {
  std::vector<unsigned char> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

}  // namespace

// The kernel before wrote the inputs: each run finds them as at the start, even after a kernel
// that wrote into them, on any thread count and for sizes that do not split evenly.
TEST(CacheState, EachRunFindsTheInputsAsAtTheStart) {
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (size_t n : {size_t{1}, size_t{63}, size_t{1000}, size_t{1} << 20}) {
      std::vector<unsigned char> a = iota_bytes(n, 7), b = iota_bytes(n + 5, 1);
      const std::vector<unsigned char> a0 = a, b0 = b;
      const CacheState cache({{a.data(), a.size()}, {b.data(), b.size()}}, {}, {}, 0);
      std::fill(a.begin(), a.end(), 0);
      b.back() = 0;
      cache.prime();
      EXPECT_EQ(a, a0) << threads << " threads, " << n << " bytes";
      EXPECT_EQ(b, b0) << threads << " threads, " << n << " bytes";
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Flushing the weights, sweeping the last-level cache and reading the outputs change no data.
TEST(CacheState, FlushSweepAndReadsLeaveTheData) {
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<unsigned char> w = iota_bytes(4099, 3), out = iota_bytes(130, 9), in = iota_bytes(64, 0);
    const std::vector<unsigned char> w0 = w, out0 = out, in0 = in;
    const CacheState cache({{in.data(), in.size()}}, {{w.data(), w.size()}}, {{out.data(), out.size()}}, size_t{4} << 20);
    for (int run = 0; run < 3; ++run) cache.prime();
    EXPECT_EQ(w, w0);
    EXPECT_EQ(out, out0);
    EXPECT_EQ(in, in0);
  }
  omp_set_num_threads(omp_get_num_procs());
}
