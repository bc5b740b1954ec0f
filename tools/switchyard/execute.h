// Timed execution of a module with the reference executor, and saving its outputs.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "api/inputs.h"
#include "api/latency.h"
#include "ir/module.h"

namespace sy::cli {

struct Execution {
  std::vector<std::string> output_names;  // one per output (api::output_names)
  std::vector<Tensor> outputs;            // of the last run
  std::vector<double> times_ms;           // of the timed runs
  api::LatencyStats latency;
  int threads = 1;
};

// Runs the model once on inputs; throws sy::Error. Null: the reference executor on the module.
using Runner = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

// `warmup` untimed runs, then `repeat` timed runs (progress shown on a terminal).
Execution execute(const ir::Module& m, const std::vector<api::PreparedInput>& inputs, int threads, int warmup,
                  int repeat, const Runner& runner = nullptr);

// Writes DIR/<sanitised name>.npy for every output (creating DIR); returns the paths.
std::vector<std::string> write_outputs(const std::string& dir, const Execution& ex);

}  // namespace sy::cli
