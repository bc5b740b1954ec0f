// libFuzzer target: bytes -> the .npy reader. A bad file must be refused with sy::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "support/error.h"
#include "support/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)sy::npy::read_bytes(bytes, "fuzz.npy");
  } catch (const sy::Error&) {
  }
  return 0;
}
