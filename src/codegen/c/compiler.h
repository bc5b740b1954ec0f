// Compiles C source into a shared library with the system C compiler, cached by content hash.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sy::codegen {

struct CompileOptions {
  std::string cc = "cc";
  // The alias-query cap: GCC's value numbering walked aliases for 47% of the time of the
  // depthwise kernels' edge-peeled copies (EfficientNet-B0's C compile 26 s); at 50 instead of
  // 1000 the units of the benchmark models compile 26% faster, most to the same bytes.
  std::vector<std::string> flags = {"-O3", "-fPIC", "-shared", "-fopenmp", "-fno-math-errno",
                                    "-std=gnu11", "-fwrapv", "-w", "--param", "sccvn-max-alias-queries-per-access=50"};
  // The instruction set and tuning (target::Target::compiler_flags); empty: the host's. Never
  // -march=native: the library may run on another machine of the target.
  std::vector<std::string> target_flags;
  // Empty: default_cache_dir().
  std::string cache_dir;
  // Compiler processes at once for a library of several units; 0: compile_jobs' default.
  int jobs = 0;
};

// opts.jobs if set, else $SWITCHYARD_COMPILE_JOBS (sy::Error unless 1-1024), else the CPUs this
// process may run on.
int compile_jobs(const CompileOptions& opts = {});

// $SWITCHYARD_CACHE_DIR, else $XDG_CACHE_HOME/switchyard, else ~/.cache/switchyard.
std::string default_cache_dir();

// The path of the shared library built from source (compiled unless the cache has it). The cache
// key covers the source, the compiler's identity and every flag (the target's among them). Throws
// sy::Error with the compiler's first error lines if compilation fails.
std::string compile_shared_library(const std::string& source, const CompileOptions& opts = {});
// The same for a library of several translation units (c_generator.h's generate_c_units): each
// compiled to an object by its own compiler process, compile_jobs(opts) at a time, then linked.
// The cache key covers every unit in order; the sources stay in the cache as KEY-U.c.
std::string compile_shared_library(const std::vector<std::string>& units, const CompileOptions& opts = {});

// The first line of `cc --version` (e.g. "cc (Debian 12.2.0-14) 12.2.0"): part of the cache key
// and of tuning records' validators. sy::Error if the compiler cannot be run.
std::string compiler_identity(const std::string& cc = "cc");

// How many times this process has run the C compiler (cache hits do not count).
int64_t compiler_invocations();

// Runs argv (found on PATH) with stdout and stderr sent to the file log; returns its exit status
// (-1 if it could not start or did not exit).
int run_command(const std::vector<std::string>& argv, const std::string& log);

// A 128-bit content hash as 32 hex digits.
std::string content_hash(const std::string& data);

}  // namespace sy::codegen
