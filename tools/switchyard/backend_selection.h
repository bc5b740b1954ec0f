// --backends / --prefer for the commands that partition (partition, compile, run).
#pragma once
#include <functional>
#include <string>
#include <vector>

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

// Resolves names against the built-in backends (none given: nothing is offloaded); throws
// sy::Error naming an unknown backend, an empty entry, a duplicate, or a malformed --prefer.
partition::PartitionOptions partition_options(const BackendArgs& args);

// Runs the pipeline, printing the IR after --dump-after's pass(es) to stdout.
partition::PartitionResult run_partition(const ir::Module& m, const BackendArgs& args);

// With --placement measured: replaces r (the rules' placement of `model`) by the placement
// measured on this machine (runtime/measured_placement.h) for `target`, with the tuning records
// file `records` if not empty (its placement records are used and added to). Returns one
// "placement: @region ..." line per region of the rules' placement, and one on the records.
// No-op ("") for rules; sy::Error for a target that is not a cpu this machine runs.
std::string apply_placement(partition::PartitionResult& r, const ir::Module& model, const BackendArgs& args,
                            const target::Target& target, const std::string& records, int threads,
                            const std::function<void(const std::string&)>& progress);

// Builds the backends' modules for a partitioned module; each region a backend could not build
// (it then runs natively) is printed as one warning line on stderr.
// Code is built for `target` (the host's features when it is `reference`).
runtime::CompiledModel build_backend_modules(const ir::Module& partitioned, const BackendArgs& args,
                                             const target::Target& target);

// --target for compile and run: a target string (see target/target.h), parsed now.
constexpr const char* kTargetHelp =
    "where the parts no backend takes run: 'cpu' (native kernels for this machine, the default), a cpu "
    "target string such as 'cpu -isa=avx2' or 'cpu -mcpu=znver3' (kernels for that CPU; see `switchyard "
    "target --help`), or 'reference' (the reference executor)";

// Every backend built into this binary (for loading artifacts).
std::vector<const backends::Backend*> all_backends();

}  // namespace sy::cli
