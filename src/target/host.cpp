// Host detection: cpuid and xgetbv for features (a feature counts only if the OS saves its
// registers), sysfs (else cpuid) for caches, the affinity mask for cores.
#include "target/host.h"

#include <cpuid.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "support/error.h"
#include "support/join.h"

namespace sy::target {

namespace {

struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned sub = 0) {
  Regs r;
  if (!__get_cpuid_count(leaf, sub, &r.a, &r.b, &r.c, &r.d)) r = Regs{};
  return r;
}

uint64_t xgetbv0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool bit(unsigned v, int b) { return (v >> b) & 1u; }

std::vector<std::string> detect_features() {
  std::vector<std::string> f;
  const unsigned max_leaf = cpuid(0).a;
  const Regs l1 = cpuid(1);
  const Regs l7 = max_leaf >= 7 ? cpuid(7, 0) : Regs{};
  const Regs l7s1 = max_leaf >= 7 && l7.a >= 1 ? cpuid(7, 1) : Regs{};
  const Regs e1 = cpuid(0x80000001);
  const bool osxsave = bit(l1.c, 27);
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool avx_os = (xcr0 & 0x6) == 0x6;             // XMM and YMM state
  const bool avx512_os = avx_os && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool amx_os = (xcr0 & 0x60000) == 0x60000;       // XTILECFG, XTILEDATA
  auto add = [&](bool on, const char* name) {
    if (on) f.emplace_back(name);
  };
  add(bit(l1.c, 0), "sse3");
  add(bit(l1.c, 9), "ssse3");
  add(bit(l1.c, 19), "sse4.1");
  add(bit(l1.c, 20), "sse4.2");
  add(bit(l1.c, 23), "popcnt");
  add(bit(l1.c, 22), "movbe");
  add(bit(e1.c, 5), "lzcnt");
  add(bit(l7.b, 3), "bmi");
  add(bit(l7.b, 8), "bmi2");
  add(avx_os && bit(l1.c, 28), "avx");
  add(avx_os && bit(l1.c, 12), "fma");
  add(avx_os && bit(l1.c, 29), "f16c");
  add(avx_os && bit(l7.b, 5), "avx2");
  add(avx_os && bit(l7s1.a, 4), "avxvnni");
  add(avx512_os && bit(l7.b, 16), "avx512f");
  add(avx512_os && bit(l7.b, 17), "avx512dq");
  add(avx512_os && bit(l7.b, 21), "avx512ifma");
  add(avx512_os && bit(l7.b, 28), "avx512cd");
  add(avx512_os && bit(l7.b, 30), "avx512bw");
  add(avx512_os && bit(l7.b, 31), "avx512vl");
  add(avx512_os && bit(l7.c, 1), "avx512vbmi");
  add(avx512_os && bit(l7.c, 11), "avx512vnni");
  add(avx512_os && bit(l7.d, 23), "avx512fp16");
  add(avx512_os && bit(l7s1.a, 5), "avx512bf16");
  add(amx_os && bit(l7.d, 24), "amx-tile");
  add(amx_os && bit(l7.d, 22), "amx-bf16");
  add(amx_os && bit(l7.d, 25), "amx-int8");
  std::sort(f.begin(), f.end());
  return f;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\0')) s.pop_back();
  size_t i = s.find_first_not_of(' ');
  return i == std::string::npos ? "" : s.substr(i);
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return f ? trim(s) : std::string();
}

// sysfs cache sizes read "48K", "2048K", "105M".
int64_t sysfs_size(const std::string& s) {
  if (s.empty()) return 0;
  char* end = nullptr;
  long long n = std::strtoll(s.c_str(), &end, 10);
  if (n <= 0) return 0;
  if (*end == 'K') return n << 10;
  if (*end == 'M') return n << 20;
  if (*end == 'G') return static_cast<int64_t>(n) << 30;
  return n;
}

// The tuning GCC 12 has for this CPU: the Zen generations by family, Intel and others generic
// (GCC's Intel tunings mostly differ in vector-width preferences, which the target sets itself).
std::string tuning_for(const HostInfo& h) {
  if (h.vendor == "AuthenticAMD") {
    if (h.family >= 0x19) return "znver3";  // Zen 3 and later (GCC 12 has no znver4/5 tuning)
    if (h.family == 0x17) return h.model >= 0x30 ? "znver2" : "znver1";
  }
  return "generic";
}

HostInfo detect() {
  HostInfo h;
  Regs v = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &v.b, 4);
  std::memcpy(vendor + 4, &v.d, 4);
  std::memcpy(vendor + 8, &v.c, 4);
  h.vendor = vendor;
  const unsigned sig = cpuid(1).a;
  const unsigned base_family = (sig >> 8) & 0xf, base_model = (sig >> 4) & 0xf;
  h.family = static_cast<int>(base_family == 0xf ? base_family + ((sig >> 20) & 0xff) : base_family);
  h.model = static_cast<int>(base_family == 0x6 || base_family == 0xf ? base_model | (((sig >> 16) & 0xf) << 4)
                                                                       : base_model);
  if (cpuid(0x80000000).a >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      Regs r = cpuid(0x80000002 + i);
      std::memcpy(brand + 16 * i, &r, 16);
    }
    h.model_name = trim(brand);
  }
  Target& t = h.detected;
  t.kind = Kind::Cpu;
  t.features = detect_features();
  t.mtune = tuning_for(h);
  cpu_set_t set;
  CPU_ZERO(&set);
  t.cores = sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
  int found = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    const int64_t size = sysfs_size(read_line(dir + "size"));
    if (level.empty() || size == 0) continue;
    if (level == "1" && type == "Data") t.l1d_bytes = size, ++found;
    if (level == "2" && type != "Instruction") t.l2_bytes = size, ++found;
    if (level == "3" && type != "Instruction") t.l3_bytes = size, ++found;
  }
  h.cache_source = "sysfs";
  if (found < 2) {
    const CacheSizes c = caches_from_cpuid([](unsigned leaf, unsigned sub) {
      const Regs r = cpuid(leaf, sub);
      return CpuidRegs{r.a, r.b, r.c, r.d};
    });
    if (c.l1d > 0 && c.l2 > 0) {
      t.l1d_bytes = c.l1d;
      t.l2_bytes = c.l2;
      if (c.l3 > 0) t.l3_bytes = c.l3;
      h.cache_source = c.l3 > 0 ? "cpuid (sysfs cache sizes unreadable)"
                                : "cpuid (sysfs cache sizes unreadable; L3 a default)";
    } else {
      h.cache_source = "defaults (sysfs and cpuid give no cache sizes)";
    }
  }
  return h;
}

}  // namespace

CacheSizes caches_from_cpuid(const std::function<CpuidRegs(unsigned, unsigned)>& cpuid) {
  CacheSizes c;
  const unsigned max_leaf = cpuid(0, 0).a, max_ext = cpuid(0x80000000, 0).a;
  const bool topoext = max_ext >= 0x8000001D && bit(cpuid(0x80000001, 0).c, 22);
  for (unsigned leaf : {4u, 0x8000001Du}) {
    if ((leaf == 4 && max_leaf < 4) || (leaf != 4 && !topoext)) continue;
    for (unsigned sub = 0; sub < 16; ++sub) {
      const CpuidRegs r = cpuid(leaf, sub);
      const unsigned type = r.a & 0x1f, level = (r.a >> 5) & 0x7;
      if (type == 0) break;  // no more caches
      if (type == 2) continue;  // instructions
      const int64_t size = int64_t((r.b >> 22) + 1) * (((r.b >> 12) & 0x3ff) + 1) * ((r.b & 0xfff) + 1) * (int64_t(r.c) + 1);
      if (level == 1) c.l1d = size;
      if (level == 2) c.l2 = size;
      if (level == 3) c.l3 = size;
    }
    if (c.l1d && c.l2) return c;
  }
  c = CacheSizes{};
  if (max_ext >= 0x80000006) {
    c.l1d = int64_t(cpuid(0x80000005, 0).c >> 24) << 10;
    c.l2 = int64_t(cpuid(0x80000006, 0).c >> 16) << 10;
  }
  return c;
}

const HostInfo& host_info() {
  static const HostInfo h = [] {
    HostInfo d = detect();
    if (const char* o = std::getenv("SWITCHYARD_HOST_TARGET"); o && *o) d.override_text = o;
    return d;
  }();
  return h;
}

const Target& host() {
  static std::once_flag once;
  static Target t;
  static std::string error;
  std::call_once(once, [] {
    const HostInfo& h = host_info();
    if (h.override_text.empty()) {
      t = h.detected;
      return;
    }
    try {
      t = parse(h.override_text, h.detected);
      if (t.kind != Kind::Cpu) error = "SWITCHYARD_HOST_TARGET must be a cpu target, got '" + h.override_text + "'";
      // It may only take features away: claiming more would let code for them run and die of SIGILL.
      const std::vector<std::string> extra = t.missing_on(h.detected);
      if (!extra.empty())
        error = "SWITCHYARD_HOST_TARGET='" + h.override_text + "' claims " + join(extra, ", ") +
                ", which this CPU does not have";
    } catch (const Error& e) {
      error = std::string("SWITCHYARD_HOST_TARGET: ") + e.what();
    }
  });
  if (!error.empty()) throw Error(error);
  return t;
}

std::string cannot_run_here(const Target& code, const std::string& what) {
  if (code.kind != Kind::Cpu) return "";
  const Target& h = host();
  const std::vector<std::string> missing = code.missing_on(h);
  if (missing.empty()) return "";
  const std::string list = join(missing, ", ");
  const HostInfo& info = host_info();
  std::string cpu = info.override_text.empty() ? (info.model_name.empty() ? "this CPU" : "this CPU (" + info.model_name + ")")
                                               : "this CPU (as SWITCHYARD_HOST_TARGET='" + info.override_text + "' says)";
  return what + " use " + list + ", which " + cpu + " does not have: they were built for '" + code.str() +
         "'; compile for this machine (--target cpu) or for an ISA level it has (--target 'cpu -isa=" + h.isa_name() + "')";
}

}  // namespace sy::target
