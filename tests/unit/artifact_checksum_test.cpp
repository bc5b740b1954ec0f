// The artifact checksum: streamed over pieces of any sizes it equals the one-shot value, and that
// value is the one the format has always used (artifacts written before stay readable).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "runtime/artifact_checksum.h"

namespace sy::runtime {
namespace {

// The format's definition, written out once more as the test's oracle.
uint64_t reference_checksum(const char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

TEST(ArtifactChecksum, OneShotMatchesTheFormat) {
  std::mt19937 rng(7);
  for (size_t n = 0; n < 70; ++n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    EXPECT_EQ(checksum(s.data(), s.size()), reference_checksum(s.data(), s.size())) << n << " bytes";
  }
}

TEST(ArtifactChecksum, StreamedInPiecesOfAnySize) {
  std::mt19937 rng(11);
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 65u, 1000u, 4099u}) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    for (int trial = 0; trial < 20; ++trial) {
      Checksum c(n);
      size_t at = 0;
      while (at < n) {
        size_t piece = std::min<size_t>(n - at, rng() % 20);  // includes empty pieces
        c.update(s.data() + at, piece);
        at += piece;
      }
      EXPECT_EQ(c.finish(), reference_checksum(s.data(), n)) << n << " bytes, trial " << trial;
    }
  }
}

}  // namespace
}  // namespace sy::runtime
