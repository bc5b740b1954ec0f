// Timed runs on the reference executor and .npy output files.
#include "execute.h"

#include <chrono>
#include <filesystem>

#include "api/analysis.h"
#include "api/outputs.h"
#include "backends/reference/executor.h"
#include "cli_common.h"
#include "support/error.h"
#include "support/npy.h"

namespace sy::cli {

Execution execute(const ir::Module& m, const std::vector<api::PreparedInput>& inputs, int threads, int warmup,
                  int repeat, const Runner& runner) {
  Execution ex;
  ex.output_names = api::output_names(m);
  ex.threads = resolve_threads(threads);
  std::vector<Tensor> values;
  for (const auto& in : inputs) values.push_back(in.value);
  reference::ExecOptions opts;
  opts.threads = threads;
  Progress progress;
  int total = warmup + repeat;
  for (int i = 0; i < total; ++i) {
    bool timed = i >= warmup;
    progress.show(timed ? "run " + std::to_string(i - warmup + 1) + "/" + std::to_string(repeat)
                        : "warmup " + std::to_string(i + 1) + "/" + std::to_string(warmup));
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Tensor> outs;
    if (runner) {
      outs = runner(values);
    } else {
      Result<std::vector<Tensor>> r = reference::run_module(m, values, opts);
      if (!r) throw Error(r.status().message());
      outs = std::move(r.value());
    }
    auto t1 = std::chrono::steady_clock::now();
    if (timed) ex.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i + 1 == total) ex.outputs = std::move(outs);
  }
  SY_CHECK(ex.outputs.size() == ex.output_names.size())
      << "executor returned " << ex.outputs.size() << " outputs, the module declares " << ex.output_names.size();
  ex.latency = api::latency_stats(ex.times_ms);
  return ex;
}

std::vector<std::string> write_outputs(const std::string& dir, const Execution& ex) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create the output directory: " + ec.message());
  std::vector<std::string> paths;
  auto stems = api::output_file_stems(ex.output_names);
  for (size_t i = 0; i < ex.outputs.size(); ++i) {
    std::string path = (std::filesystem::path(dir) / (stems[i] + ".npy")).string();
    npy::write_file(path, ex.outputs[i]);
    paths.push_back(path);
  }
  return paths;
}

}  // namespace sy::cli
