// "p" + 3 -> "p3", written so that GCC 12 does not warn (-Wrestrict false positive on
// `"literal" + std::to_string(n)`, GCC bug 105329).
#pragma once
#include <cstdint>
#include <string>

namespace sy {

inline std::string numbered(std::string prefix, int64_t n) {
  prefix += std::to_string(n);
  return prefix;
}

}  // namespace sy
