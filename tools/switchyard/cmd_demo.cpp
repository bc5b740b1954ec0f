// `switchyard demo`: the quick start's main job. Builds a model (zoo:resnet50 by default),
// summarises it, runs it once with timing and saves its outputs, explaining each step.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "api/analysis.h"
#include "api/inputs.h"
#include "api/outputs.h"
#include "cli_common.h"
#include "execute.h"
#include "zoo/zoo.h"

namespace sy::cli {
namespace {

struct DemoArgs {
  std::string model = "zoo:resnet50";
  std::string output_dir = "switchyard-out";
  int threads = 0;
  int repeat = 1;
  uint64_t seed = 0;
};

std::string describe(const std::string& spec) {
  if (spec.rfind("zoo:", 0) == 0)
    for (const auto& m : zoo::list_models())
      if ("zoo:" + m.name == spec) return m.description;
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_demo(const DemoArgs& a) {
  std::cout << "Switchyard demo: " << a.model << " end to end on the reference executor\n\n";
  auto t0 = std::chrono::steady_clock::now();
  ir::Module m = load(a.model, {});
  double load_s = seconds_since(t0);
  api::ModelStats st = api::analyze(m);
  std::string desc = describe(a.model);
  std::cout << "1. Load     " << a.model << " in " << fixed(load_s, 2) << " s"
            << (desc.empty() ? "" : "\n             " + desc) << "\n";
  for (const auto& t : st.inputs)
    std::cout << "             input  '" << t.name << "'  " << dtype_name(t.dtype) << " " << shape_str(t.shape) << "\n";
  for (const auto& t : st.outputs)
    std::cout << "             output '" << t.name << "'  " << dtype_name(t.dtype) << " " << shape_str(t.shape) << "\n";
  std::cout << "             " << with_commas(st.params) << " parameters, "
            << fixed(static_cast<double>(st.flops) / 1e9, 2) << " GFLOP per inference, " << st.num_ops
            << " op calls\n";
  std::vector<std::pair<std::string, int64_t>> hist(st.op_histogram.begin(), st.op_histogram.end());
  std::stable_sort(hist.begin(), hist.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::cout << "             most used ops:";
  for (size_t i = 0; i < hist.size() && i < 5; ++i)
    std::cout << (i ? ", " : " ") << hist[i].first << " x" << hist[i].second;
  std::cout << "\n";

  auto inputs = api::prepare_inputs(m, {}, a.seed);
  Execution ex = execute(m, inputs, a.threads, /*warmup=*/0, a.repeat);
  double gflops_per_s = static_cast<double>(st.flops) / 1e9 / (ex.latency.median / 1e3);
  std::cout << "2. Run      " << (a.repeat == 1 ? "once" : std::to_string(a.repeat) + " times")
            << " on random input (uniform in [-1, 1), seed " << a.seed << "), " << ex.threads << " thread"
            << (ex.threads == 1 ? "" : "s") << ": " << ms(ex.latency.median)
            << (a.repeat == 1 ? "" : " (median)") << ", " << fixed(gflops_per_s, 1) << " GFLOP/s\n";

  auto paths = write_outputs(a.output_dir, ex);
  std::cout << "3. Save     ";
  for (size_t i = 0; i < paths.size(); ++i)
    std::cout << (i ? "           " : "") << paths[i] << "  "
              << api::summary_line(ex.outputs[i], api::summarize(ex.outputs[i])) << "\n";
  std::cout << "\nThe weights are random (seeded), so the values mean nothing; the pipeline is real.\n"
            << "Next:\n"
            << "  build/bin/switchyard inspect " << a.model << "        inputs, outputs, ops, params, FLOPs\n"
            << "  build/bin/switchyard run model.onnx --input input=x.npy --output-dir out --repeat 10\n"
            << "  build/bin/switchyard zoo                             the other built-in models\n";
  return 0;
}

}  // namespace

Command add_demo_command(CLI::App& root) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* c = root.add_subcommand("demo", "Load, inspect, run and save a model end to end (default zoo:resnet50)");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy or zoo:NAME")->capture_default_str();
  c->add_option("--output-dir", args->output_dir, "where to write the outputs (.npy)")->capture_default_str();
  c->add_option("--threads", args->threads, "threads of the executor (0: all cores)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  c->add_option("--repeat", args->repeat, "timed runs")->check(CLI::Range(1, 1000000))->capture_default_str();
  c->add_option("--seed", args->seed, "seed of the random input")->capture_default_str();
  return {c, [args] { return run_demo(*args); }};
}

}  // namespace sy::cli
