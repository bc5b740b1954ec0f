// The artifact's 64-bit checksum, over one buffer or streamed over pieces (same value).
#pragma once
#include <cstddef>
#include <cstdint>

namespace sy::runtime {

// Eight bytes at a time (FNV-style mixing with a final avalanche): fast enough for hundreds of
// megabytes of weights, and any flipped bit changes it. The total size seeds it, so a streamed
// checksum must know the size up front.
class Checksum {
 public:
  explicit Checksum(uint64_t total_bytes);
  // The next `n` bytes; pieces may have any sizes (a word split across pieces is carried over).
  void update(const char* p, size_t n);
  // Valid once exactly total_bytes have been given.
  uint64_t finish() const;

 private:
  void mix_word(uint64_t w);
  uint64_t h_;
  unsigned char carry_[8];
  size_t carried_ = 0;
};

uint64_t checksum(const char* p, size_t n);

}  // namespace sy::runtime
