// Output naming and summaries for `switchyard run`.
#include "api/outputs.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace sy::api {

std::string sanitize_file_name(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    s += ok ? c : '_';
  }
  if (!s.empty() && s[0] == '.') s[0] = '_';  // no hidden files, no "." or ".."
  return s.empty() ? "output" : s;
}

std::vector<std::string> output_file_stems(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::map<std::string, int> used;
  for (const auto& n : names) {
    std::string s = sanitize_file_name(n);
    std::string candidate = s;
    for (int k = 2; used.count(candidate); ++k) candidate = s + "_" + std::to_string(k);
    used[candidate] = 1;
    out.push_back(candidate);
  }
  return out;
}

TensorSummary summarize(const Tensor& t) {
  TensorSummary s;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_as_double(i);
    if (i < 6) s.first.push_back(v);
    if (!std::isfinite(v)) {
      ++s.nonfinite;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++finite;
  }
  if (finite) {
    s.min = lo;
    s.max = hi;
    s.mean = sum / static_cast<double>(finite);
  }
  return s;
}

std::string summary_line(const Tensor& t, const TensorSummary& s) {
  std::ostringstream os;
  os.precision(4);
  os << shape_str(t.shape()) << " " << dtype_name(t.dtype());
  if (t.numel() == 0) return os.str() + "  (empty)";
  os << "  min " << s.min << "  max " << s.max << "  mean " << s.mean << "  [";
  for (size_t i = 0; i < s.first.size(); ++i) os << (i ? ", " : "") << s.first[i];
  if (t.numel() > static_cast<int64_t>(s.first.size())) os << ", ...";
  os << "]";
  if (s.nonfinite) os << "  (" << s.nonfinite << " NaN/inf)";
  return os.str();
}

}  // namespace sy::api
