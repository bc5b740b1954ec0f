// Targets: what a target string ("cpu", "cpu -isa=avx2", "reference") means on this machine, and
// the host as detected (what `switchyard target` shows).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/switchyard.h"

namespace switchyard {

struct TargetInfo {
  std::string str;   // the canonical target string
  std::string kind;  // "cpu" or "reference"; the rest is for cpu targets
  std::string isa;   // "avx512", "avx2", "sse4.2", "x86-64"
  std::string isa_level;  // its x86-64 level: "x86-64", "x86-64-v2", ...
  std::vector<std::string> features;  // GCC feature names the code may use, sorted
  int vector_lanes_f32 = 0, vector_registers = 0;
  int cores = 0;
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // per core, per core, shared
  std::string mtune;
  std::string codegen;  // the native kernels' code generator: "c", or a codegen hook's name
  std::vector<std::string> compiler_flags;
  std::string key;  // what tuning records and caches are keyed by
  std::string cannot_run_here;  // why code for it cannot run on this machine ("" if it can)
  std::vector<std::string> missing_here;  // features it uses that this machine lacks
};
// "" is the host ("cpu"). Error naming an unknown kind, attribute, CPU or feature.
SWITCHYARD_API TargetInfo target_info(const std::string& text = "");

struct HostInfo {
  std::string vendor;      // "AuthenticAMD", "GenuineIntel", ...
  std::string model_name;  // the cpuid brand string
  int family = 0, model = 0;
  std::string detected;      // the CPU as a target string
  std::string cache_source;  // "sysfs" or "defaults (sysfs unreadable)"
  std::string override_text;  // $SWITCHYARD_HOST_TARGET when it replaces the host
};
SWITCHYARD_API HostInfo host_info();

// What -mcpu= and -mattr= accept.
SWITCHYARD_API std::vector<std::string> known_cpus();
SWITCHYARD_API std::vector<std::string> known_features();
// What -codegen= accepts: "c" (the system C compiler) and the codegen hooks built in, each with
// a line that says what it is.
SWITCHYARD_API std::vector<std::pair<std::string, std::string>> code_generators();

}  // namespace switchyard
