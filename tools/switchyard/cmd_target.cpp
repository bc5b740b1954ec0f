// `switchyard target [TARGET]`: the host as detected, or a target string resolved against it.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include <switchyard/target.h>

#include "cli_common.h"

namespace switchyard::cli {
namespace {

std::string codegen_lines() {
  std::string s;
  for (const auto& [name, what] : code_generators()) s += "\n      " + name + ": " + what;
  return s;
}

struct TargetArgs {
  std::string text;
  bool json = false;
};

std::string bytes(int64_t b) {
  if (b >= (1 << 20) && b % (1 << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= (1 << 10) && b % (1 << 10) == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

int run_target(const TargetArgs& a) {
  const HostInfo h = host_info();
  const TargetInfo t = target_info(a.text);
  const bool is_cpu = t.kind == "cpu";
  const std::string why = t.cannot_run_here;
  if (a.json) {
    nlohmann::json j;
    j["target"] = t.str;
    j["kind"] = t.kind;
    if (is_cpu) {
      j["isa"] = t.isa;
      j["features"] = t.features;
      j["vector_lanes_f32"] = t.vector_lanes_f32;
      j["vector_registers"] = t.vector_registers;
      j["cores"] = t.cores;
      j["cache_bytes"] = {{"l1d", t.l1d_bytes}, {"l2", t.l2_bytes}, {"l3", t.l3_bytes}};
      j["mtune"] = t.mtune;
      j["codegen"] = t.codegen;
      j["compiler_flags"] = t.compiler_flags;
      j["key"] = t.key;
    }
    j["runs_here"] = why.empty();
    if (!why.empty()) j["missing_here"] = t.missing_here;
    j["host"] = {{"vendor", h.vendor}, {"model_name", h.model_name}, {"family", h.family}, {"model", h.model},
                 {"detected", h.detected}, {"caches_from", h.cache_source}};
    if (!h.override_text.empty()) j["host"]["override"] = h.override_text;
    j["code_generators"] = nlohmann::json::array();
    for (const auto& [name, what] : code_generators()) j["code_generators"].push_back({{"name", name}, {"description", what}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "host:     " << (h.model_name.empty() ? "unknown CPU" : h.model_name) << " (" << h.vendor << ", family "
            << h.family << ", model " << h.model << ")\n";
  if (!h.override_text.empty())
    std::cout << "          replaced by SWITCHYARD_HOST_TARGET='" << h.override_text << "'\n";
  std::cout << "target:   " << t.str << "\n";
  if (!is_cpu) {
    std::cout << "          the reference executor: no generated code, runs on any CPU\n";
    return 0;
  }
  std::cout << "  ISA         " << t.isa << " (" << t.isa_level << "): " << t.vector_lanes_f32
            << " f32 lanes per vector, " << t.vector_registers << " vector registers\n";
  std::cout << "  features    " << join(t.features, " ") << "\n";
  std::cout << "  caches      L1d " << bytes(t.l1d_bytes) << ", L2 " << bytes(t.l2_bytes) << " per core; L3 "
            << bytes(t.l3_bytes) << (a.text.empty() ? " (" + h.cache_source + ")" : "") << "\n";
  std::cout << "  cores       " << t.cores << (a.text.empty() ? " (this process's CPU affinity)" : "") << "\n";
  std::cout << "  C flags     " << join(t.compiler_flags, " ") << "\n";
  std::cout << "  record key  " << t.key << "\n";
  std::cout << "  runs here   " << (why.empty() ? "yes" : "no: " + why) << "\n";
  return 0;
}

}  // namespace

Command add_target_command(CLI::App& root) {
  auto args = std::make_shared<TargetArgs>();
  CLI::App* c = root.add_subcommand("target", "Show the host CPU as a target, or what a target string means");
  c->add_option("TARGET", args->text, "a target string, e.g. 'cpu -isa=avx2' (default: the host, 'cpu')");
  c->add_flag("--json", args->json, "print it as JSON");
  c->footer(
      "A target string is a kind and attributes: 'reference', or 'cpu' (this machine, detected) followed by\n"
      "  -isa=x86-64|sse4.2|avx2|avx512   exactly that ISA level (code that runs on any CPU of the level)\n"
      "  -mcpu=NAME                a named CPU: " + join(known_cpus(), ", ") + "\n"
      "  -mattr=+F,-F              add or remove features: " + join(known_features(), ", ") + "\n"
      "  -mtune=NAME               the C compiler's tuning only\n"
      "  -cores=N -l1d=48K -l2=1M -l3=32M   what schedules are sized for\n"
      "  -codegen=NAME             the native kernels' code generator:" + codegen_lines() + "\n"
      "compile and run take it as --target. Example: switchyard compile model.onnx --target 'cpu -isa=avx2' -o m.sya");
  return {c, [args] { return run_target(*args); }};
}

}  // namespace switchyard::cli
