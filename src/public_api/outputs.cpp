// Looking at a run's results: timing statistics, output summaries, output file names, the
// comparison with the reference executor.
#include "access.h"
#include "api/latency.h"
#include "api/outputs.h"
#include "runtime/region_timing.h"
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
  return guarded([&] { return sy::runtime::relative_error(internal_tensors(a), internal_tensors(b)); });
}

}  // namespace switchyard
