// The artifact checksum (see artifact_checksum.h).
#include "runtime/artifact_checksum.h"

#include <cstring>

namespace sy::runtime {

Checksum::Checksum(uint64_t total_bytes) : h_(0xcbf29ce484222325ull ^ total_bytes) {}

void Checksum::mix_word(uint64_t w) {
  h_ = (h_ ^ w) * 0x100000001b3ull;
  h_ ^= h_ >> 29;
}

void Checksum::update(const char* p, size_t n) {
  if (n == 0) return;
  if (carried_) {  // complete the word begun by the previous piece
    size_t take = n < 8 - carried_ ? n : 8 - carried_;
    std::memcpy(carry_ + carried_, p, take);
    carried_ += take;
    p += take;
    n -= take;
    if (carried_ < 8) return;
    uint64_t w;
    std::memcpy(&w, carry_, 8);
    mix_word(w);
    carried_ = 0;
  }
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    mix_word(w);
  }
  std::memcpy(carry_, p + i, n - i);
  carried_ = n - i;
}

uint64_t Checksum::finish() const {
  uint64_t h = h_;
  // The last total_bytes % 8 bytes are mixed one at a time.
  for (size_t i = 0; i < carried_; ++i) h = (h ^ carry_[i]) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

uint64_t checksum(const char* p, size_t n) {
  Checksum c(n);
  c.update(p, n);
  return c.finish();
}

}  // namespace sy::runtime
