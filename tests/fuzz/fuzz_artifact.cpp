// libFuzzer target: bytes -> the .sya artifact loader (container, graph text, constants, backend
// modules, the native execution plan). A bad artifact must be refused with sy::Error.
//
// Before loading, the harness rewrites the checksums of a well-framed input so that mutations
// reach the parsers behind them (a flipped byte is otherwise only ever a checksum mismatch), and
// it empties any "native:library" section: that is a shared library the loader dlopens, i.e.
// code the artifact's author runs by design, not data to parse. Backends whose load compiles
// code (c_source runs the C compiler) are left out for the same reason and for speed.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "runtime/artifact.h"
#include "runtime/artifact_checksum.h"
#include "support/error.h"

namespace {

uint32_t get_u32(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t get_u64(const std::string& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void set_u64(std::string& b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// Layout in runtime/artifact.h. Leaves input it cannot follow as it is (the loader refuses it).
std::string fix_checksums(std::string b) {
  if (b.size() < 16 || std::memcmp(b.data(), "SWYDART\0", 8) != 0) return b;
  const uint32_t count = get_u32(b, 12);
  std::string covered = b.substr(0, 16);
  size_t pos = 16;
  for (uint32_t i = 0; i < count; ++i) {
    if (b.size() - pos < 4) return b;
    const uint32_t name_len = get_u32(b, pos);
    if (name_len > 256 || b.size() - pos - 4 < name_len + 16u) return b;
    const std::string name = b.substr(pos + 4, name_len);
    const size_t size_at = pos + 4 + name_len, sum_at = size_at + 8, content_at = sum_at + 8;
    uint64_t size = get_u64(b, size_at);
    if (size > b.size() - content_at) return b;
    if (name == "native:library") {
      b.erase(content_at, size);
      size = 0;
      set_u64(b, size_at, 0);
    }
    set_u64(b, sum_at, sy::runtime::checksum(b.data() + content_at, size));
    covered.append(b, pos, content_at - pos);
    pos = content_at + size;
  }
  if (b.size() - pos != 8) return b;
  set_u64(b, pos, sy::runtime::checksum(covered.data(), covered.size()));
  return b;
}

std::vector<const sy::backends::Backend*> loadable_backends() {
  std::vector<const sy::backends::Backend*> out;
  const auto& registry = sy::backends::BackendRegistry::global();
  for (const std::string& name : registry.names())
    if (name != "c_source") out.push_back(registry.find(name));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<const sy::backends::Backend*> backends = loadable_backends();
  const std::string bytes = fix_checksums(std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)sy::runtime::load_artifact_bytes(bytes, "fuzz.sya", backends);
  } catch (const sy::Error&) {
  }
  return 0;
}
