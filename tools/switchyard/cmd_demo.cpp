// `switchyard demo`: the quick start's main job. Builds a model (zoo:resnet50 by default),
// summarises it, runs it once with timing and saves its outputs, explaining each step.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "execute.h"

namespace switchyard::cli {
namespace {

struct DemoArgs {
  std::string model = "zoo:resnet50";
  std::string output_dir = "switchyard-out";
  int threads = 0;
  int repeat = 10;
  uint64_t seed = 0;
};

std::string describe(const std::string& spec) {
  if (spec.rfind("zoo:", 0) == 0)
    for (const auto& m : zoo_models())
      if ("zoo:" + m.name == spec) return m.description;
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_demo(const DemoArgs& a) {
  std::cout << "Switchyard demo: " << a.model << " compiled to native kernels, saved as one artifact, loaded and run\n\n";
  auto t0 = std::chrono::steady_clock::now();
  Model m = load(a.model, {});
  double load_s = seconds_since(t0);
  ModelStats st = m.stats();
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

  // 2. Compile: fusion, topi kernels, C, the system compiler (cached), one artifact.
  std::error_code ec;
  std::filesystem::create_directories(a.output_dir, ec);
  if (ec) throw Error(a.output_dir + ": cannot create the output directory: " + ec.message());
  std::string artifact = (std::filesystem::path(a.output_dir) / "model.sya").string();
  t0 = std::chrono::steady_clock::now();
  Summary cs;
  {
    Progress progress;
    CompileOptions opts;
    opts.progress = [&](const std::string& s) { progress.show(s); };
    Compiled cm = compile(m, opts);
    progress.show("writing " + artifact + "...");
    cm.save(artifact);
    cs = cm.inspect();
  }
  std::cout << "2. Compile  in " << fixed(seconds_since(t0), 1) << " s (C compilation is cached): " << cs.native_kernels
            << " fused kernels for " << st.num_ops << " ops, activation memory "
            << si(static_cast<double>(cs.activation_bytes), "B") << " planned for "
            << si(static_cast<double>(cs.intermediate_bytes), "B") << " of intermediates\n"
            << "             for target " << cs.target << "\n"
            << "             -> " << artifact << " (" << si(static_cast<double>(std::filesystem::file_size(artifact)), "B")
            << ", loads without a compiler)\n";

  // 3. Load the artifact as a deployment would, and time it.
  Compiled loaded = Compiled::load(artifact);
  auto inputs = loaded.prepare_inputs({}, a.seed);
  int threads = a.threads;
  Execution ex = execute(loaded.output_names(), inputs, threads, /*warmup=*/1, a.repeat,
                         [&](const std::vector<Tensor>& in) { return loaded.run_ordered(in, threads); });
  double gflops_per_s = static_cast<double>(st.flops) / 1e9 / (ex.latency.median / 1e3);
  std::cout << "3. Run      the artifact " << a.repeat << " times on random input (uniform in [-1, 1), seed " << a.seed
            << "), " << ex.threads << " thread" << (ex.threads == 1 ? "" : "s") << ": median " << ms(ex.latency.median)
            << ", " << fixed(gflops_per_s, 1) << " GFLOP/s\n";

  // 4. Check against the reference executor (the oracle).
  std::vector<std::string> ref_names;
  for (const TensorInfo& t : st.outputs) ref_names.push_back(t.name);
  Execution ref = execute(ref_names, inputs, threads, /*warmup=*/0, /*repeat=*/1,
                          [&](const std::vector<Tensor>& in) { return m.run_reference(in, threads); });
  double err = relative_error(ex.outputs, ref.outputs);
  std::cout << "4. Check    against the reference executor (" << ms(ref.latency.median) << "): relative error "
            << std::scientific << std::setprecision(1) << err << std::defaultfloat << (err < 1e-4 ? " (ok)" : " (LARGE)")
            << "\n";

  auto paths = write_outputs(a.output_dir, ex);
  std::cout << "5. Save     ";
  for (size_t i = 0; i < paths.size(); ++i)
    std::cout << (i ? "           " : "") << paths[i] << "  "
              << summary_line(ex.outputs[i]) << "\n";
  std::string backends;
  for (const std::string& b : available_backends()) backends += (backends.empty() ? "" : ", ") + b;
  std::cout << "\nThe weights are random (seeded), so the values mean nothing; the pipeline is real.\n"
            << "Next:\n"
            << "  build/bin/switchyard inspect " << artifact << "   kernels, planned memory\n"
            << "  build/bin/switchyard partition model.onnx --backends LIST --explain   offload to a library ("
            << (backends.empty() ? "none built in" : backends) << ")\n"
            << "  build/bin/switchyard compile model.onnx --backends LIST -o model.sya\n"
            << "  build/bin/switchyard run model.onnx --input input=x.npy --output-dir out --repeat 10\n"
            << "  build/bin/switchyard zoo                             the other built-in models\n";
  return err < 1e-3 ? 0 : 1;
}

}  // namespace

Command add_demo_command(CLI::App& root) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* c = root.add_subcommand(
      "demo", "Compile a model natively into an artifact, load it, run it and check it (default zoo:resnet50)");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy or zoo:NAME")->capture_default_str();
  c->add_option("--output-dir", args->output_dir, "where to write the outputs (.npy)")->capture_default_str();
  c->add_option("--threads", args->threads, "threads of the executor (0: all cores)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  c->add_option("--repeat", args->repeat, "timed runs")->check(CLI::Range(1, 1000000))->capture_default_str();
  c->add_option("--seed", args->seed, "seed of the random input")->capture_default_str();
  return {c, [args] { return run_demo(*args); }};
}

}  // namespace switchyard::cli
