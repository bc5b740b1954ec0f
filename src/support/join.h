// Joining names into one line of text (lists in messages and help).
#pragma once
#include <string>
#include <vector>

namespace sy {

inline std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (const auto& x : items) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace sy
