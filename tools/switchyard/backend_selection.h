// --backends / --prefer / --placement / --dump-after for the commands that partition (partition,
// compile, run).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <switchyard/report.h>
#include <switchyard/switchyard.h>

namespace CLI { class App; }

namespace switchyard::cli {

struct BackendArgs {
  std::string backends;              // "mylib,otherlib" (priority order)
  std::vector<std::string> prefer;   // "nn.conv2d=otherlib"
  std::string dump_after;            // a pass name, or "all"
  std::string placement = "rules";   // rules, or measured
};

// Adds --backends and --prefer (and --dump-after if with_dump) to a command.
void add_backend_options(CLI::App& app, BackendArgs& args, bool with_dump);

// The compile options from the command line's; Error for a malformed --prefer or an unknown
// --dump-after pass (the IR after the pass(es) is printed to stdout).
CompileOptions compile_options(const BackendArgs& args, const std::string& target, const std::string& records,
                               int threads);

// The partitioning alone (the partition command), printing as --dump-after says.
// By the rules, or measured (args.placement) with these records, thread count and progress.
Partitioned run_partition(const Model& m, const BackendArgs& args, const std::string& records = "", int threads = 0,
                          std::function<void(const std::string&)> progress = nullptr);

// --target for compile and run: a target string (see `switchyard target --help`).
constexpr const char* kTargetHelp =
    "where the parts no backend takes run: 'cpu' (native kernels for this machine, the default), a cpu "
    "target string such as 'cpu -isa=avx2' or 'cpu -mcpu=znver3' (kernels for that CPU; see `switchyard "
    "target --help`), or 'reference' (the reference executor)";

}  // namespace switchyard::cli
