// The caches as a model leaves them for one of its kernels, made again before each timed run of
// the kernel alone (the tuner's candidates, tune/measure.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sy::tune {

// Timed hot and alone, a kernel misses what the model costs it: inside DenseNet-121 on 2 threads
// its 1x1 convs on 14x14 took 0.20 ms against 0.10 alone, its classifier 0.084 against 0.035,
// and NHWC variants that won alone lost (tuned so, the model ran 20.7 ms; 19.8 with its weights
// flushed, 20.6 with only the private caches swept, the weights then in the last-level cache).
// prime() runs on the OpenMP threads and leaves:
// - the weights in memory only (every other layer's weights went through the caches since the
//   kernel's last run; TVM's measurements flush them too): `flush` line by line, and, where a
//   library keeps its own copy out of sight (an extern's state), a sweep through `sweep_bytes`
//   (twice the last-level cache: a few ms a run, so only those who need it pay);
// - the inputs just written by the kernel before, each thread a contiguous share;
// - the outputs' memory last read by another thread: the arena hands out memory that the other
//   core's kernels used.
class CacheState {
 public:
  using Span = std::pair<void*, size_t>;
  CacheState(std::vector<Span> inputs, std::vector<Span> flush, std::vector<Span> outputs, size_t sweep_bytes);
  void prime() const;

 private:
  std::vector<Span> inputs_, flush_, outputs_;
  std::vector<std::vector<unsigned char>> pristine_;  // the inputs' contents, written back each time
  const std::vector<unsigned char>* sweep_ = nullptr;
  mutable unsigned sink_ = 0;  // what the sweeps read, so that they are not left out
};

}  // namespace sy::tune
