// Targets: parsing and printing target strings, ISA levels and what follows from them, errors,
// and the feature check that keeps an artifact off a CPU without its features.
#include <gtest/gtest.h>

#include <map>

#include "support/error.h"
#include "target/host.h"
#include "target/target.h"
#include "topi/topi.h"

namespace sy {
namespace {

// A fixed host, so the tests mean the same on every machine: a Zen 4-like AVX-512 CPU.
target::Target zen4() { return target::parse("cpu -mcpu=znver4 -cores=2 -l1d=32K -l2=1M -l3=32M", target::Target{}); }

std::string error_of(const std::string& text) {
  try {
    target::parse(text, zen4());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Target, IsaLevelsGiveLanesRegistersAndFlags) {
  const target::Target h = zen4();
  EXPECT_EQ(h.isa(), target::IsaLevel::Avx512);
  EXPECT_EQ(h.vector_lanes(), 16);
  EXPECT_EQ(h.vector_registers(), 32);
  EXPECT_TRUE(h.has("avx512vnni"));
  const target::Target a2 = target::parse("cpu -isa=avx2", h);
  EXPECT_EQ(a2.isa_name(), "avx2");
  EXPECT_EQ(a2.vector_lanes(), 8);
  EXPECT_EQ(a2.vector_registers(), 16);
  EXPECT_FALSE(a2.has("avx512f"));
  EXPECT_FALSE(a2.has("avx512vnni"));  // -isa is exactly the level: extras go
  EXPECT_EQ(a2.cores, 2);              // sizes stay the host's
  EXPECT_EQ(a2.compiler_flags(), (std::vector<std::string>{"-march=x86-64-v3", "-mtune=znver3"}));
  const target::Target s = target::parse("cpu -isa=sse4.2", h);
  EXPECT_EQ(s.vector_lanes(), 4);
  EXPECT_EQ(s.compiler_flags().front(), "-march=x86-64-v2");
  // Removing a level feature lowers the level; the rest stays as -m flags.
  const target::Target nofma = target::parse("cpu -isa=avx2 -mattr=-fma", h);
  EXPECT_EQ(nofma.isa_name(), "sse4.2");
  const auto f = nofma.compiler_flags();
  EXPECT_NE(std::find(f.begin(), f.end(), "-mavx2"), f.end());
  EXPECT_EQ(std::find(f.begin(), f.end(), "-mfma"), f.end());
  for (const auto& t : {h, a2, s, nofma})
    for (const auto& flag : t.compiler_flags()) EXPECT_EQ(flag.find("native"), std::string::npos) << flag;
}

TEST(Target, PrintsCanonicallyAndParsesBack) {
  for (const std::string text : {"cpu", "cpu -isa=avx2", "cpu -mcpu=znver3 -cores=4", "cpu -isa=avx512 -mattr=+avx512bf16",
                                 "cpu -mcpu=sapphirerapids -l3=105M", "cpu -isa=avx2 -mattr=-fma,-f16c", "cpu -isa=x86-64",
                                 "cpu -isa=sse4.2 -mattr=-popcnt", "cpu -isa=avx2 -mattr=-popcnt,-movbe"}) {
    const target::Target t = target::parse(text, zen4());
    EXPECT_EQ(target::parse(t.str(), target::Target{}), t) << text << " -> " << t.str();
    EXPECT_EQ(target::parse(t.str(), target::parse("cpu -isa=sse4.2 -cores=7", zen4())), t) << "host-independent";
  }
  EXPECT_EQ(target::parse("cpu -isa=avx2 -mtune=generic -cores=2 -l1d=48K -l2=2M -l3=32M", zen4()).str(),
            "cpu -isa=avx2 -mtune=generic -cores=2 -l1d=48K -l2=2M -l3=32M");
  EXPECT_EQ(target::parse("reference", zen4()).str(), "reference");
  // -isa / -mcpu apply first: -mattr edits their features wherever it is written.
  EXPECT_TRUE(target::parse("cpu -mattr=+avx512vnni -isa=avx512", zen4()).has("avx512vnni"));
  // Below x86-64-v2: the baseline level, never -march=x86-64-v2 for a CPU without SSE4.2.
  const target::Target old = target::parse("cpu -isa=sse4.2 -mattr=-popcnt", zen4());
  EXPECT_EQ(old.isa(), target::IsaLevel::Baseline);
  EXPECT_EQ(old.compiler_flags().front(), "-march=x86-64");
  EXPECT_EQ(target::parse("cpu -isa=x86-64", zen4()).vector_lanes(), 4);
  EXPECT_EQ(target::parse("cpu -isa=avx2", zen4()).key(), "cpu avx2 cores=2");
}

TEST(Target, ErrorsNameTheProblem) {
  EXPECT_NE(error_of("").find("empty target string"), std::string::npos);
  EXPECT_NE(error_of("gpu").find("unknown target kind 'gpu'"), std::string::npos);
  EXPECT_NE(error_of("cpu -frob=1").find("unknown target attribute '-frob'"), std::string::npos);
  EXPECT_NE(error_of("cpu -isa=avx3").find("unknown ISA level"), std::string::npos);
  EXPECT_NE(error_of("cpu -mcpu=pentium").find("unknown CPU"), std::string::npos);
  EXPECT_NE(error_of("cpu -mattr=+avx9").find("unknown feature 'avx9'"), std::string::npos);
  EXPECT_NE(error_of("cpu -cores=0").find("-cores=0"), std::string::npos);
  EXPECT_NE(error_of("cpu -cores=2x").find("-cores=2x"), std::string::npos);
  EXPECT_NE(error_of("cpu -l2=lots").find("-l2=lots"), std::string::npos);
  EXPECT_NE(error_of("cpu -isa").find("needs a value"), std::string::npos);
  EXPECT_NE(error_of("cpu avx2").find("not an attribute"), std::string::npos);
  EXPECT_NE(error_of("reference -isa=avx2").find("takes no attributes"), std::string::npos);
  EXPECT_NE(error_of("cpu -isa=avx2 -mattr=+avx512vnni").find("avx512vnni needs avx512f"), std::string::npos);
  // A feature without one the compiler's flag implies (code would use what the list omits).
  EXPECT_NE(error_of("cpu -isa=avx512 -mattr=-ssse3").find("needs ssse3"), std::string::npos);
  EXPECT_NE(error_of("cpu -isa=avx2 -mattr=-sse4.1").find("needs sse4.1"), std::string::npos);
  EXPECT_NE(error_of("cpu -isa=avx2 -mcpu=znver3").find("one of -isa and -mcpu"), std::string::npos);
  // -mtune reaches a compiler command line.
  EXPECT_NE(error_of("cpu -mtune=x;touch${IFS}/tmp/p").find("-mtune"), std::string::npos);
  EXPECT_NE(error_of("cpu -mtune=a$(b)").find("-mtune"), std::string::npos);
}

TEST(Target, MissingFeaturesAreWhatTheCodeUsesAndTheCpuLacks) {
  const target::Target avx512 = target::parse("cpu -isa=avx512", zen4());
  const target::Target avx2 = target::parse("cpu -isa=avx2", zen4());
  EXPECT_EQ(avx512.missing_on(avx2),
            (std::vector<std::string>{"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"}));
  EXPECT_TRUE(avx2.missing_on(avx512).empty());
  EXPECT_TRUE(zen4().missing_on(zen4()).empty());
}

TEST(Target, HostIsDetectedAndRunsItsOwnCode) {
  const target::HostInfo& h = target::host_info();
  EXPECT_FALSE(h.vendor.empty());
  const target::Target& t = target::host();
  EXPECT_EQ(t.kind, target::Kind::Cpu);
  EXPECT_TRUE(t.has("sse4.2"));  // every x86-64 CPU we run on has at least x86-64-v2
  EXPECT_GE(t.cores, 1);
  EXPECT_GT(t.l1d_bytes, 0);
  EXPECT_EQ(target::cannot_run_here(t, "x"), "");
  EXPECT_EQ(target::parse("cpu").str(), t.str());
  // Code for a feature no CPU here has is refused, naming it.
  target::Target future = t;
  future.features.push_back("avx512f");
  future.features.push_back("amx-tile");
  std::sort(future.features.begin(), future.features.end());
  future.features.erase(std::unique(future.features.begin(), future.features.end()), future.features.end());
  if (!t.has("amx-tile")) {
    EXPECT_NE(target::cannot_run_here(future, "the kernels").find("amx-tile"), std::string::npos);
  }
}

TEST(Target, WeightBlockIsOneVector) {
  EXPECT_EQ(topi::weight_block(zen4()), 16);
  EXPECT_EQ(topi::weight_block(target::parse("cpu -isa=avx2", zen4())), 8);
}

// A deterministic-cache-leaf subleaf: type (1 data, 2 instructions, 3 unified), level, ways, sets.
target::CpuidRegs cache_leaf(unsigned type, unsigned level, unsigned ways, unsigned sets) {
  return {type | (level << 5), ((ways - 1) << 22) | 63u, sets - 1, 0};
}

TEST(Target, CacheSizesComeFromCpuidWhenSysfsHasNone) {
  using Table = std::map<std::pair<unsigned, unsigned>, target::CpuidRegs>;
  auto from = [](Table t) {
    return target::caches_from_cpuid([t](unsigned leaf, unsigned sub) {
      auto it = t.find({leaf, sub});
      return it == t.end() ? target::CpuidRegs{} : it->second;
    });
  };
  // Intel: leaf 4 lists L1d 48K (12 ways x 64 sets x 64 B), L1i, L2 2M, L3 105M (15 x 112,000 sets).
  Table intel = {{{0, 0}, {0x1f, 0, 0, 0}},
                 {{4, 0}, cache_leaf(1, 1, 12, 64)},
                 {{4, 1}, cache_leaf(2, 1, 8, 64)},
                 {{4, 2}, cache_leaf(3, 2, 16, 2048)},
                 {{4, 3}, cache_leaf(3, 3, 15, 114688)}};
  target::CacheSizes c = from(intel);
  EXPECT_EQ(c.l1d, 48 << 10);
  EXPECT_EQ(c.l2, 2 << 20);
  EXPECT_EQ(c.l3, 15LL * 114688 * 64);
  // AMD with TOPOEXT: leaf 0x8000001D (leaf 4 reads as no cache).
  Table zen = {{{0, 0}, {0x10, 0, 0, 0}},
               {{0x80000000, 0}, {0x80000021, 0, 0, 0}},
               {{0x80000001, 0}, {0, 0, 1u << 22, 0}},
               {{0x8000001D, 0}, cache_leaf(1, 1, 12, 64)},
               {{0x8000001D, 1}, cache_leaf(2, 1, 8, 64)},
               {{0x8000001D, 2}, cache_leaf(3, 2, 16, 1024)},
               {{0x8000001D, 3}, cache_leaf(3, 3, 16, 32768)}};
  c = from(zen);
  EXPECT_EQ(c.l1d, 48 << 10);
  EXPECT_EQ(c.l2, 1 << 20);
  EXPECT_EQ(c.l3, 32 << 20);
  // AMD without TOPOEXT (a Firecracker guest on Zen 5): the legacy leaves give L1d and L2 in KB;
  // their L3 field (the socket's 508 MB there) is not taken.
  Table legacy = {{{0, 0}, {0x10, 0, 0, 0}},
                  {{0x80000000, 0}, {0x80000021, 0, 0, 0}},
                  {{0x80000005, 0}, {0, 0, 48u << 24, 0}},
                  {{0x80000006, 0}, {0, 0, 1024u << 16, 1016u << 18}}};
  c = from(legacy);
  EXPECT_EQ(c.l1d, 48 << 10);
  EXPECT_EQ(c.l2, 1 << 20);
  EXPECT_EQ(c.l3, 0);
  // Nothing known: zeros, and the host keeps its defaults.
  c = from({});
  EXPECT_EQ(c.l1d, 0);
  EXPECT_EQ(c.l2, 0);
}

}  // namespace
}  // namespace sy
