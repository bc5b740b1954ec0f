// `switchyard compile MODEL --backends ... -o model.sya`: partition, build every backend's module,
// write one artifact.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "backend_selection.h"
#include "cli_common.h"
#include "partition_summary.h"
#include "runtime/artifact.h"
#include "support/error.h"

namespace sy::cli {
namespace {

struct CompileArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  BackendArgs backends;
  std::string output;
  bool quiet = false;
};

int run_compile(const CompileArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  ir::Module m = load(a.model, a.input_shapes);
  Progress progress;
  progress.show("partitioning...");
  partition::PartitionResult r = run_partition(m, a.backends);
  progress.show("building backend modules...");
  runtime::CompiledModel cm = runtime::build_modules(r.module, partition_options(a.backends).backends);
  progress.show("writing " + a.output + "...");
  runtime::save_artifact(cm, a.output);
  progress.clear();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.quiet) {
    std::cout << "model: " << a.model << "  backends (priority order): "
              << (a.backends.backends.empty() ? "none" : a.backends.backends) << "\n";
    print_partition(std::cout, m, r, false);
    std::cout << "wrote " << a.output << " (" << si(static_cast<double>(std::filesystem::file_size(a.output)), "B")
              << ") in " << fixed(secs, 1) << " s; run it with: switchyard run " << a.output << "\n";
  }
  return 0;
}

}  // namespace

Command add_compile_command(CLI::App& root) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* c = root.add_subcommand("compile", "Compile a model into one artifact (.sya) that runs without a compiler");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy or zoo:NAME")->required();
  c->add_option("-o,--output", args->output, "artifact to write (e.g. model.sya)")->required();
  c->add_option("--input-shape", args->input_shapes, "NAME=D1,D2,...: static shape of an input")->type_name("NAME=SHAPE");
  add_backend_options(*c, args->backends, /*with_dump=*/true);
  c->add_flag("-q,--quiet", args->quiet, "print nothing on success");
  c->footer(
      "The artifact holds the partitioned graph, its constants (once) and every backend's module, with a\n"
      "format version and checksums. Parts not offloaded run on the reference executor.\n"
      "Example: switchyard compile model.onnx --backends LIST -o model.sya && switchyard run model.sya");
  return {c, [args] { return run_compile(*args); }};
}

}  // namespace sy::cli
