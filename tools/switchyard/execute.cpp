// Timed runs and .npy output files.
#include "execute.h"

#include <chrono>
#include <filesystem>

#include "cli_common.h"

namespace switchyard::cli {

Execution execute(const std::vector<std::string>& output_names, const std::vector<InputValue>& inputs, int threads,
                  int warmup, int repeat, const Runner& runner) {
  Execution ex;
  ex.output_names = output_names;
  ex.threads = resolve_threads(threads);
  std::vector<Tensor> values;
  for (const auto& in : inputs) values.push_back(in.value);
  Progress progress;
  int total = warmup + repeat;
  for (int i = 0; i < total; ++i) {
    bool timed = i >= warmup;
    progress.show(timed ? "run " + std::to_string(i - warmup + 1) + "/" + std::to_string(repeat)
                        : "warmup " + std::to_string(i + 1) + "/" + std::to_string(warmup));
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Tensor> outs = runner(values);
    auto t1 = std::chrono::steady_clock::now();
    if (timed) ex.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i + 1 == total) ex.outputs = std::move(outs);
  }
  if (ex.outputs.size() != ex.output_names.size())
    throw InternalError("executor returned " + std::to_string(ex.outputs.size()) + " outputs, the module declares " +
                        std::to_string(ex.output_names.size()));
  ex.latency = latency_stats(ex.times_ms);
  return ex;
}

std::vector<std::string> write_outputs(const std::string& dir, const Execution& ex) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create the output directory: " + ec.message());
  std::vector<std::string> paths;
  auto stems = output_file_stems(ex.output_names);
  for (size_t i = 0; i < ex.outputs.size(); ++i) {
    std::string path = (std::filesystem::path(dir) / (stems[i] + ".npy")).string();
    ex.outputs[i].save_npy(path);
    paths.push_back(path);
  }
  return paths;
}

}  // namespace switchyard::cli
