// --backends / --prefer for the commands that partition (partition, compile, run).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "api/compile.h"
#include "partition/pipeline.h"
#include "runtime/compiled_model.h"

namespace CLI { class App; }

namespace sy::cli {

struct BackendArgs {
  std::string backends;              // "mylib,otherlib" (priority order)
  std::vector<std::string> prefer;   // "nn.conv2d=otherlib"
  std::string dump_after;            // a pass name, or "all"
  std::string placement = "rules";   // rules, or measured (see runtime/measured_placement.h)
};

// Adds --backends and --prefer (and --dump-after if with_dump) to a command.
void add_backend_options(CLI::App& app, BackendArgs& args, bool with_dump);

// The options of a compile (api/compile.h) from the command line's; sy::Error for a malformed
// --prefer or an unknown --dump-after pass (the IR after the pass(es) is printed to stdout).
api::CompileSpec compile_spec(const BackendArgs& args, const std::string& target, const std::string& records,
                              int threads);

// The partition pipeline alone (the partition command), printing as --dump-after says.
partition::PartitionResult run_partition(const ir::Module& m, const BackendArgs& args);

// --target for compile and run: a target string (see target/target.h), parsed now.
constexpr const char* kTargetHelp =
    "where the parts no backend takes run: 'cpu' (native kernels for this machine, the default), a cpu "
    "target string such as 'cpu -isa=avx2' or 'cpu -mcpu=znver3' (kernels for that CPU; see `switchyard "
    "target --help`), or 'reference' (the reference executor)";

// Every backend built into this binary (for loading artifacts).
std::vector<const backends::Backend*> all_backends();

}  // namespace sy::cli
