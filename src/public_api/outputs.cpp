// Looking at a run's results: timing statistics, output summaries, output file names, the
// comparison with the reference executor.
#include <algorithm>
#include <cmath>

#include "access.h"
#include "api/latency.h"
#include "api/outputs.h"
#include "switchyard/switchyard.h"

namespace switchyard {

LatencyStats latency_stats(std::vector<double> ms) {
  sy::api::LatencyStats s = sy::api::latency_stats(std::move(ms));
  return {s.median, s.min, s.max, s.mean, s.p90, s.runs};
}

TensorSummary summarize(const Tensor& t) {
  return guarded([&] {
    sy::api::TensorSummary s = sy::api::summarize(Access::get(t));
    return TensorSummary{s.first, s.min, s.max, s.mean, s.nonfinite};
  });
}

std::string summary_line(const Tensor& t) {
  return guarded([&] {
    const sy::Tensor& x = Access::get(t);
    return sy::api::summary_line(x, sy::api::summarize(x));
  });
}

std::string shape_str(const std::vector<int64_t>& shape) { return sy::shape_str(shape); }

std::vector<std::string> output_file_stems(const std::vector<std::string>& names) {
  return guarded([&] { return sy::api::output_file_stems(names); });
}

double relative_error(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double diff = 0, scale = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (a[k].dtype() != DType::f32 || b[k].dtype() != DType::f32 || a[k].numel() != b[k].numel()) continue;
    const float* x = a[k].data_as<float>();
    const float* y = b[k].data_as<float>();
    for (int64_t i = 0; i < a[k].numel(); ++i) {
      diff = std::max(diff, static_cast<double>(std::fabs(x[i] - y[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(y[i])));
    }
  }
  return scale > 0 ? diff / scale : diff;
}

}  // namespace switchyard
