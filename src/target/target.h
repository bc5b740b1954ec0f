// The machine a model is compiled for, as one value: a kind (`cpu`, `reference`) and, for `cpu`,
// the instruction-set features the generated code may use and the sizes schedules are derived
// from (vector width and register count, caches, cores). Parsed from and printed to a target
// string such as `cpu`, `cpu -isa=avx2` or `cpu -mcpu=znver3 -cores=2`; `cpu` alone is the host.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sy::target {

enum class Kind { Cpu, Reference };

// x86 ISA levels, each a superset of the one before (the psABI's x86-64 baseline (SSE2) and
// x86-64-v2/v3/v4).
enum class IsaLevel { Baseline = 1, Sse42 = 2, Avx2 = 3, Avx512 = 4 };

struct Target {
  Kind kind = Kind::Cpu;
  // GCC feature names (-m<name>), sorted, unique: exactly what generated code may use and so
  // what a CPU must have to run it.
  std::vector<std::string> features;
  std::string mcpu;   // what the features came from: a CPU name ("znver3"), "host" or an ISA level
  std::string mtune;  // the C compiler's -mtune
  int cores = 1;      // threads a schedule plans for
  int64_t l1d_bytes = 32 << 10, l2_bytes = 1 << 20, l3_bytes = 32 << 20;  // per core, per core, shared
  // The code generator of the native kernels: "c" (the C compiler), or a codegen hook's name
  // (codegen/c/hooks.h), which replaces it.
  std::string codegen = "c";

  bool has(const std::string& feature) const;
  IsaLevel isa() const;             // the highest level whose features are all present
  int vector_lanes() const;         // f32 lanes of the widest vector the ISA level has
  int vector_registers() const;     // architectural vector registers at that level
  std::string isa_name() const;     // "avx512", "avx2", "sse4.2", "x86-64"
  // The canonical target string; parse(str()) gives this target back.
  std::string str() const;
  // A short key for caches and tuning records: kind, ISA level, extra features, cores.
  std::string key() const;
  // The C compiler flags that select the instruction set and tuning (never -march=native).
  std::vector<std::string> compiler_flags() const;
  // Features this target's code uses that `cpu` lacks, sorted.
  std::vector<std::string> missing_on(const Target& cpu) const;

  bool operator==(const Target& o) const = default;
};

// Parses a target string. `cpu` starts from the host (detected); attributes then override it:
//   -isa=x86-64|sse4.2|avx2|avx512   exactly that ISA level's features (an artifact that runs on
//                             any CPU of the level; may be above the host's: cross-compilation)
//   -mcpu=NAME                a named CPU's features and tuning (znver3, znver4, haswell, ...)
//                             (-isa or -mcpu, not both; applied before the other attributes)
//   -mtune=NAME               the C compiler's tuning only
//   -mattr=+f1,-f2            add or remove single features
//   -cores=N  -l1d=48K  -l2=1M  -l3=32M
//   -codegen=NAME             the native kernels' code generator: c (the default) or a codegen
//                             hook built in (`switchyard target --help` lists them); checked
//                             when code is generated
// Throws sy::Error naming an unknown kind, attribute, CPU or feature, a malformed value, or a
// feature set a compiler cannot honour (a feature without one it implies: avx without ssse3).
Target parse(const std::string& text);
// parse() relative to a given host instead of the detected one (tests, cross-compilation).
Target parse(const std::string& text, const Target& host);

// The reference executor's target (no generated code).
Target reference();

// Every feature name the target strings accept, and the named CPUs, for help and error messages.
const std::vector<std::string>& known_features();
std::vector<std::string> known_cpus();

}  // namespace sy::target
