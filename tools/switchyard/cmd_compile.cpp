// `switchyard compile MODEL --backends ... -o model.sya`: partition, build every backend's module,
// write one artifact.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <switchyard/report.h>
#include <switchyard/target.h>

#include "backend_selection.h"
#include "cli_common.h"
#include "partition_summary.h"

namespace switchyard::cli {
namespace {

struct CompileArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  BackendArgs backends;
  std::string output;
  std::string target = "cpu";
  std::string emit;
  bool quiet = false;
  bool explain = false;
  std::string records;
};

int run_compile(const CompileArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  Model m = load(a.model, a.input_shapes);
  Progress progress;
  CompileOptions opts = compile_options(a.backends, a.target, a.records, 0);
  opts.progress = [&](const std::string& s) { progress.show(s); };
  opts.keep_generated_c = !a.emit.empty();
  const auto target = target_info(a.target);
  if (!a.emit.empty() && target.kind != "cpu") throw Error("--emit c needs a cpu target (--target cpu ...)");
  const std::string codegen = target.codegen;
  // The code goes to OUTPUT with the codegen's extension: that must not be the artifact itself.
  if (!a.emit.empty() && std::filesystem::path(a.output).extension() == "." + codegen)
    throw Error("--emit c writes the generated code to OUTPUT with ." + codegen + ", which is -o " + a.output +
                " itself: name the artifact otherwise (e.g. " +
                std::filesystem::path(a.output).replace_extension(".sya").string() + ")");
  Compiled cm = compile(m, opts);
  const CompileReport c = compile_report(cm);
  for (const std::string& w : c.warnings) std::cerr << "switchyard: warning: " << w << "\n";
  if (c.has_native && !a.emit.empty()) {
    // A codegen hook's module is in its own language: OUTPUT with .<codegen>.
    const bool c_source = codegen == "c";
    std::string path = std::filesystem::path(a.output).replace_extension("." + codegen).string();
    std::ofstream f(path);
    f << c.native.generated_c;
    if (!f) throw Error(path + ": cannot write the generated code");
    if (!a.quiet) std::cout << (c_source ? "generated C: " : "generated code (" + codegen + "): ") << path << "\n";
  }
  progress.show("writing " + a.output + "...");
  cm.save(a.output);
  progress.clear();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.quiet) {
    std::cout << "model: " << a.model << "  backends (priority order): "
              << (a.backends.backends.empty() ? "none" : a.backends.backends) << "\n";
    std::cout << c.placement;
    if (a.explain) std::cout << c.placement_nodes;
    print_partition(std::cout, c.partition, a.explain);
    std::cout << "target: " << c.target << "\n";
    if (c.has_native) {
      const NativeReport& n = c.native;
      std::cout << "native: " << n.kernel_launches << " kernel launches (" << n.distinct_kernels << " distinct), "
                << "activation memory " << si(static_cast<double>(n.planned_bytes), "B") << " planned for "
                << si(static_cast<double>(n.intermediate_bytes), "B") << " of intermediates; lowering "
                << fixed(n.lower_seconds, 1) << " s, " << (codegen == "c" ? std::string("C compiler") : codegen + " code generator")
                << " " << fixed(n.compile_seconds, 1) << " s\n";
      for (const auto& [k, why] : n.fallbacks) std::cout << "  " << k << " runs on the reference kernels: " << why << "\n";
      if (!n.records.empty()) std::cout << n.records << "\n";
      if (a.explain) std::cout << n.kernel_choices;
    }
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
  c->add_option("--target", args->target, kTargetHelp)->capture_default_str();
  c->add_option("--emit", args->emit, "c: also write the native kernels' generated code beside the artifact (OUTPUT with .c; with a codegen hook, its module's text, OUTPUT with .<codegen>)")
      ->check(CLI::IsMember({"c"}));
  c->add_flag("-q,--quiet", args->quiet, "print nothing on success");
  c->add_option("--records", args->records,
                 "tuning records (from `switchyard tune`): each kernel takes its workload's best record; with "
                 "--placement measured also the placements measured (read, and added to)")
      ->type_name("FILE");
  c->add_flag("--explain", args->explain,
              "say why each node went where it went, and for every native kernel the implementations that "
              "applied, the one chosen and why");
  c->footer(
      "The artifact holds the partitioned graph, its constants (once) and every backend's module, with a\n"
      "format version, checksums and its target; `run` refuses it on a CPU without the target's features.\n"
      "Parts not offloaded run as natively compiled kernels (--target cpu ...). For machines other than\n"
      "this one: --target 'cpu -isa=avx2' (any AVX2 CPU), 'cpu -mcpu=znver3', 'cpu -isa=avx512'.\n"
      "Example: switchyard compile model.onnx --backends LIST -o model.sya && switchyard run model.sya");
  return {c, [args] { return run_compile(*args); }};
}

}  // namespace switchyard::cli
