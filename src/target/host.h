// The host CPU as a Target: features from cpuid (checked against what the OS saves, xgetbv),
// caches from sysfs (else cpuid), cores from the affinity mask. Detected once per process.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "target/target.h"

namespace sy::target {

struct HostInfo {
  Target detected;         // what this CPU is
  std::string vendor;      // "AuthenticAMD", "GenuineIntel", ...
  std::string model_name;  // the cpuid brand string
  int family = 0, model = 0;
  std::string cache_source;  // "sysfs", "cpuid (sysfs unreadable)" or "defaults (...)"
  // $SWITCHYARD_HOST_TARGET when set: a target string (relative to `detected`) that replaces the
  // host for everything (what `cpu` means, what an artifact is checked against). It lets a test
  // play a CPU without a feature, e.g. SWITCHYARD_HOST_TARGET="cpu -isa=avx2" on an AVX-512 machine;
  // it may only remove features (one the CPU lacks is an error). Libraries that pick their code
  // at run time (oneDNN) do not read it: set ONEDNN_MAX_CPU_ISA beside it.
  std::string override_text;
};

const HostInfo& host_info();

// Cache sizes from cpuid, for machines whose sysfs has none (virtual machines): the deterministic
// cache leaf (Intel's 4, AMD's 0x8000001D when the CPU has TOPOEXT), else AMD's legacy leaves
// 0x80000005/6 for L1d and L2 (their L3 field is the whole socket's under some hypervisors, so
// it is not taken). `cpuid(leaf, subleaf)` returns {eax, ebx, ecx, edx}; 0 = not found.
struct CpuidRegs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};
struct CacheSizes {
  int64_t l1d = 0, l2 = 0, l3 = 0;
};
CacheSizes caches_from_cpuid(const std::function<CpuidRegs(unsigned, unsigned)>& cpuid);

// The host target: the detected CPU, or the override. Throws sy::Error if the override is malformed.
const Target& host();

// Why code built for `code` cannot run on this host (the missing features and what to do), or ""
// when it can. `what` names the code in the message ("model.sya's native kernels").
std::string cannot_run_here(const Target& code, const std::string& what);

}  // namespace sy::target
