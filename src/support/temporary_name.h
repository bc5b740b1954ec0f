// A name to write a file under before renaming it into place.
#pragma once
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace sy {

// `path`.<pid>.<n>.tmp: of this process and this call, so that two writers of one path at once
// (parallel tests compiling one artifact did) never rename each other's half-written file.
inline std::string temporary_name(const std::string& path) {
  static std::atomic<uint64_t> calls{0};
  return path + "." + std::to_string(::getpid()) + "." + std::to_string(calls++) + ".tmp";
}

}  // namespace sy
