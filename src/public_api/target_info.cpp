// Targets as data: a target string resolved against this machine, and the host as detected.
#include "access.h"
#include "codegen/c/hooks.h"
#include "switchyard/target.h"
#include "target/host.h"
#include "target/target.h"

namespace switchyard {

TargetInfo target_info(const std::string& text) {
  return guarded([&] {
    const sy::target::Target t = text.empty() ? sy::target::host() : sy::target::parse(text);
    TargetInfo i;
    i.str = t.str();
    i.kind = t.kind == sy::target::Kind::Cpu ? "cpu" : "reference";
    i.cannot_run_here = sy::target::cannot_run_here(t, "its kernels");
    if (!i.cannot_run_here.empty()) i.missing_here = t.missing_on(sy::target::host());
    if (t.kind != sy::target::Kind::Cpu) return i;
    i.isa = t.isa_name();
    const sy::target::IsaLevel l = t.isa();
    i.isa_level = l == sy::target::IsaLevel::Baseline ? "x86-64" : "x86-64-v" + std::to_string(static_cast<int>(l));
    i.features = t.features;
    i.vector_lanes_f32 = t.vector_lanes();
    i.vector_registers = t.vector_registers();
    i.cores = t.cores;
    i.l1d_bytes = t.l1d_bytes;
    i.l2_bytes = t.l2_bytes;
    i.l3_bytes = t.l3_bytes;
    i.mtune = t.mtune;
    i.codegen = t.codegen;
    i.compiler_flags = t.compiler_flags();
    i.key = t.key();
    return i;
  });
}

HostInfo host_info() {
  return guarded([&] {
    const sy::target::HostInfo& h = sy::target::host_info();
    return HostInfo{h.vendor, h.model_name, h.family, h.model, h.detected.str(), h.cache_source, h.override_text};
  });
}

std::vector<std::string> known_cpus() { return sy::target::known_cpus(); }
std::vector<std::string> known_features() { return sy::target::known_features(); }

std::vector<std::pair<std::string, std::string>> code_generators() {
  return guarded([&] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& n : sy::codegen::codegen_names()) {
      const sy::codegen::CodegenHook* h = sy::codegen::find_codegen_hook(n);
      out.emplace_back(n, h ? h->description : "the system C compiler (the default)");
    }
    return out;
  });
}

}  // namespace switchyard
