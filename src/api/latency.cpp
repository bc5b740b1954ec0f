// Median, min, p90 of timings (the figures `switchyard run` reports).
#include "api/latency.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sy::api {

LatencyStats latency_stats(std::vector<double> ms) {
  LatencyStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  s.runs = static_cast<int>(n);
  s.min = ms.front();
  s.max = ms.back();
  s.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(n);
  s.median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90 = ms[std::max<size_t>(rank, 1) - 1];
  return s;
}

}  // namespace sy::api
