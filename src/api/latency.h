// Statistics of repeated timings.
#pragma once
#include <vector>

namespace sy::api {

struct LatencyStats {
  double median = 0, min = 0, max = 0, mean = 0;
  double p90 = 0;  // nearest-rank 90th percentile
  int runs = 0;
};

LatencyStats latency_stats(std::vector<double> ms);

}  // namespace sy::api
