// Timed runs of a model, and saving its outputs.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <switchyard/switchyard.h>

namespace switchyard::cli {

struct Execution {
  std::vector<std::string> output_names;  // one per output
  std::vector<Tensor> outputs;            // of the last run
  std::vector<double> times_ms;           // of the timed runs
  LatencyStats latency;
  int threads = 1;
};

// Runs the model once on inputs (in the model's input order); throws switchyard::Error.
using Runner = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

// `warmup` untimed runs, then `repeat` timed runs (progress shown on a terminal).
Execution execute(const std::vector<std::string>& output_names, const std::vector<InputValue>& inputs, int threads,
                  int warmup, int repeat, const Runner& runner);

// Writes DIR/<sanitised name>.npy for every output (creating DIR); returns the paths.
std::vector<std::string> write_outputs(const std::string& dir, const Execution& ex);

}  // namespace switchyard::cli
