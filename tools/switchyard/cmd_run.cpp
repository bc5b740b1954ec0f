// `switchyard run MODEL`: runs a model on given or random inputs, times it, saves the outputs.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <memory>

#include <switchyard/report.h>

#include "backend_selection.h"
#include "cli_common.h"
#include "execute.h"

namespace switchyard::cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> input_shapes;
  std::string output_dir;
  int threads = 0;
  int warmup = 1;
  int repeat = 5;
  uint64_t seed = 0;
  bool json = false;
  int profile = -1;  // rows of the per-kernel table; -1: no profile
  BackendArgs backends;
  std::string target = "cpu";
  std::string records;
};

int run_run(const RunArgs& a) {
  std::map<std::string, std::string> files;
  for (const auto& text : a.inputs) {
    auto [name, path] = parse_input_file(text);
    if (!files.emplace(name, path).second) throw Error("--input '" + name + "' given twice");
  }
  // An artifact, a model partitioned here for --backends, or the reference executor alone.
  std::string executor = "reference";
  Compiled cm;
  if (is_artifact(a.model)) {
    if (!a.backends.backends.empty() || !a.backends.prefer.empty() || a.backends.placement != "rules")
      throw Error(a.model + ": an artifact is already partitioned; --backends, --prefer and --placement apply to models");
    if (!a.input_shapes.empty()) throw Error(a.model + ": an artifact has fixed input shapes; drop --input-shape");
    if (!a.records.empty()) throw Error(a.model + ": an artifact's kernels are built; --records applies when compiling");
    cm = Compiled::load(a.model);
    executor = "artifact";
  } else {
    // The --input files' shapes fill a model's symbolic dimensions (a model exported with a
    // dynamic batch runs on the data given without --input-shape).
    std::map<std::string, std::vector<int64_t>> data_shapes;
    for (const auto& [name, path] : files) data_shapes[name] = Tensor::load_npy(path).shape();
    Model m = load(a.model, a.input_shapes, data_shapes);
    Progress progress;
    CompileOptions opts = compile_options(a.backends, a.target, a.records, a.threads);
    opts.progress = [&](const std::string& s) { progress.show(s); };
    cm = compile(m, opts);
    progress.clear();
    const CompileReport c = compile_report(cm);
    std::cerr << c.placement;
    for (const std::string& w : c.warnings) std::cerr << "switchyard: warning: " << w << "\n";
    if (c.has_native && !c.native.records.empty()) std::cerr << c.native.records << "\n";
    const bool native = c.has_native;
    if (native || !opts.backends.empty())
      executor = std::string(native ? "native" : "reference") + (opts.backends.empty() ? "" : " + " + a.backends.backends);
  }
  const Summary summary = cm.inspect();
  // Before the runs, which on the reference executor can take minutes.
  if (a.profile >= 0 && !summary.native)
    throw Error("--profile times natively compiled kernels; this run has none (use --target cpu)");
  if (executor == "artifact")
    executor = std::string("artifact: ") + (summary.native ? "native" : "reference") +
               (summary.backend_modules.empty() ? "" : " + " + join(summary.backend_modules, ", "));
  const int threads = a.threads;
  Runner runner = [&cm, threads](const std::vector<Tensor>& in) { return cm.run_ordered(in, threads); };
  auto inputs = cm.prepare_inputs(files, a.seed);
  Execution ex = execute(cm.output_names(), inputs, a.threads, a.warmup, a.repeat, runner);
  std::vector<std::string> paths;
  if (!a.output_dir.empty()) paths = write_outputs(a.output_dir, ex);
  // After the runs: a backend module plans its memory for the thread count it ran with.
  const int64_t module_bytes = summary.backend_modules.empty() ? 0 : cm.inspect().backend_activation_bytes;
  Profile prof;
  if (a.profile >= 0) {
    // Separate runs: timing each call adds a clock read per call, which the latency above excludes.
    Progress progress;
    std::vector<Tensor> values;
    for (const auto& in : inputs) values.push_back(in.value);
    prof = profile(cm, values, a.repeat, a.threads, [&](int i) {
      progress.show("profile run " + std::to_string(i) + "/" + std::to_string(a.repeat));
    });
  }

  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    j["executor"] = executor;
    j["target"] = executor == "reference" ? "reference" : summary.target;
    j["threads"] = ex.threads;
    j["warmup"] = a.warmup;
    j["repeat"] = a.repeat;
    j["seed"] = a.seed;
    j["activation_bytes"] = {{"native", summary.activation_bytes},
                             {"backend_modules", module_bytes < 0 ? nlohmann::json(nullptr) : nlohmann::json(module_bytes)}};
    j["latency_ms"] = {{"median", ex.latency.median}, {"min", ex.latency.min}, {"p90", ex.latency.p90},
                       {"max", ex.latency.max},       {"mean", ex.latency.mean}, {"runs", ex.times_ms}};
    j["inputs"] = nlohmann::json::array();
    for (const auto& in : inputs)
      j["inputs"].push_back({{"name", in.name}, {"shape", shape_json(in.value.shape())},
                             {"dtype", std::string(dtype_name(in.value.dtype()))}, {"source", in.source}});
    j["outputs"] = nlohmann::json::array();
    for (size_t i = 0; i < ex.outputs.size(); ++i) {
      const Tensor& t = ex.outputs[i];
      TensorSummary s = summarize(t);
      nlohmann::json o = {{"name", ex.output_names[i]}, {"shape", shape_json(t.shape())},
                          {"dtype", std::string(dtype_name(t.dtype()))}, {"min", s.min}, {"max", s.max},
                          {"mean", s.mean}, {"first", s.first}, {"nonfinite", s.nonfinite}};
      o["file"] = paths.empty() ? nlohmann::json(nullptr) : nlohmann::json(paths[i]);
      j["outputs"].push_back(o);
    }
    if (a.profile >= 0) {
      nlohmann::json calls = nlohmann::json::array();
      for (const ProfileCall& call : prof.calls)
        calls.push_back({{"kernel", call.kernel}, {"external", call.external}, {"ms", call.ms}});
      j["profile"] = {{"runs", prof.runs}, {"calls", calls}};
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "model: " << a.model << "  (" << executor << ", " << ex.threads << " thread"
            << (ex.threads == 1 ? "" : "s") << ")\n";
  std::cout << "inputs:\n";
  for (const auto& in : inputs)
    std::cout << "  " << in.name << "  " << dtype_name(in.value.dtype()) << " " << shape_str(in.value.shape())
              << "  from " << (in.source == "random" ? "random data (seed " + std::to_string(a.seed) + ")" : in.source)
              << "\n";
  std::cout << "latency over " << a.repeat << " run" << (a.repeat == 1 ? "" : "s") << " (after " << a.warmup
            << " warmup): median " << ms(ex.latency.median) << ", min " << ms(ex.latency.min) << ", p90 "
            << ms(ex.latency.p90) << "\n";
  std::cout << "activation memory: " << si(static_cast<double>(summary.activation_bytes), "B") << " planned for the native kernels";
  if (!summary.backend_modules.empty())
    std::cout << " + " << (module_bytes < 0 ? std::string("an unknown amount") : si(static_cast<double>(module_bytes), "B"))
              << " in the backend modules (" << join(summary.backend_modules, ", ") << ")";
  std::cout << "\n";
  std::cout << "outputs:\n";
  for (size_t i = 0; i < ex.outputs.size(); ++i) {
    std::cout << "  " << ex.output_names[i] << "  " << summary_line(ex.outputs[i]) << "\n";
    if (!paths.empty()) std::cout << "    -> " << paths[i] << "\n";
  }
  if (a.profile >= 0) std::cout << profile_table(prof, a.profile);
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& root) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* c = root.add_subcommand("run", "Run a model or a compiled artifact: latency and outputs");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy, zoo:NAME, or an artifact file.sya")->required();
  add_backend_options(*c, args->backends, /*with_dump=*/false);
  c->add_option("--target", args->target, kTargetHelp)->capture_default_str();
  c->add_option("--records", args->records, "tuning records (from `switchyard tune`) for the native kernels; with --placement measured also "
                 "the placements measured (read, and added to)")
      ->type_name("FILE");
  c->add_option("--input", args->inputs, "NAME=FILE.npy: value of an input (others get seeded random data)")
      ->type_name("NAME=FILE");
  c->add_option("--input-shape", args->input_shapes,
                "NAME=D1,D2,...: static shape of an input (symbolic ONNX dims; zoo batch/size)")
      ->type_name("NAME=SHAPE");
  c->add_option("--output-dir", args->output_dir, "write one NAME.npy per output into this directory");
  c->add_option("--threads", args->threads, "threads of the executor (0: all cores)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  c->add_option("--warmup", args->warmup, "untimed runs before timing")->check(CLI::Range(0, 1000000))->capture_default_str();
  c->add_option("--repeat", args->repeat, "timed runs (median, min and p90 are reported)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  c->add_option("--seed", args->seed, "seed of the random inputs")->capture_default_str();
  c->add_flag("--json", args->json, "print the results as one JSON object");
  c->add_option("--profile", args->profile,
                "after timing, time each native kernel over --repeat more runs and print the N slowest "
                "(0: all; in --json, every call)")
      ->expected(0, 1)
      ->default_str("20")
      ->check(CLI::Range(0, 100000))
      ->type_name("N");
  c->footer(
      "Random inputs: floats uniform in [-1, 1), integers in [0, 10), bools 0/1.\n"
      "Output files are named after the model's outputs ('/' and other unsafe characters become '_').");
  return {c, [args] { return run_run(*args); }};
}

}  // namespace switchyard::cli
