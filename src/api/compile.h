// Compiling a loaded model: the one path from a module to a runnable CompiledModel, which the
// command-line program and the public API (include/switchyard/) both take.
//
//   partition across the backends (priority order, per-op preferences)
//   -> placement (the rules', or measured on this machine: runtime/measured_placement.h)
//   -> each backend's runtime module (a region a backend cannot build falls back to native)
//   -> the native kernels for the rest (cpu targets; tuning records choose the kernels)
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "native/compile.h"
#include "partition/pipeline.h"
#include "runtime/compiled_model.h"
#include "target/target.h"
#include "tune/records.h"

namespace sy::api {

struct CompileSpec {
  std::string target = "cpu";                 // a target string (target/target.h), or "reference"
  std::vector<std::string> backends;          // built-in backend names, in priority order
  std::map<std::string, std::string> prefer;  // IR op name -> backend asked first for it
  std::string placement = "rules";            // "rules" or "measured"
  std::string records;                        // tuning (and placement) records file, or ""
  int threads = 0;  // what the model will run with (measured placement times with it; 0: all cores)
  std::function<void(const std::string&)> progress;
  // Sees the IR after each partition pass (the CLI's --dump-after).
  std::function<void(const std::string&, const ir::Module&)> after_pass;
};

// Backend names and preferences resolved against the built-in backends; sy::Error naming an
// unknown backend, an empty entry, a duplicate, an unknown op or a preference for a backend not
// listed.
partition::PartitionOptions partition_options(const std::vector<std::string>& backends,
                                              const std::map<std::string, std::string>& prefer);

// The tuning records of a file that apply to a target, and what was refused.
struct RecordsUse {
  std::string path;
  tune::SelectedRecords applicable;
  std::string refused;  // what was refused, one line ("" if nothing)
};

// Reads path (if not empty) and sets o.chooser; sy::Error if the file is unreadable, malformed,
// or has records of which none apply to o's target. A file with only placement records, or (with
// `placement`: measured placement will write it) none, gives nullptr: no kernel is chosen by records.
std::unique_ptr<RecordsUse> use_records(const std::string& path, native::CompileOptions& o, bool placement = false);

// "records (F): 23 kernels chosen by records, 4 by priority (no record for their workload)".
std::string records_summary(const native::Compiled& nc, const RecordsUse& r);

struct Compilation {
  target::Target target;
  partition::PartitionResult partition;  // the placement and why
  runtime::CompiledModel model;          // runnable; what an artifact saves
  std::optional<native::Compiled> native;  // the native compile's details (cpu targets)
  std::string placement;  // measured placement: one line per region, and the time it took
  std::string placement_nodes;  // measured placement: its search's per-node times (for --explain)
  std::string records;    // with records: how many kernels they chose (records_summary)
  std::vector<std::string> warnings;  // regions a backend could not build, now native
};

// Measured placement in place of the rules' partition `r` (see runtime/measured_placement.h), for
// `target` with spec's records, threads and progress: one line per region and the end-to-end
// check's (and the time it took); `node_table` gets the search's per-node times. sy::Error for a
// target that is not a cpu or cannot run here.
std::string measured_placement(const ir::Module& m, const partition::PartitionOptions& popts,
                               const target::Target& target, const CompileSpec& spec, partition::PartitionResult* r,
                               std::string* node_table);

// sy::Error with one line for bad options (an unknown backend or op, --placement measured
// without backends or for a target that cannot run here, records for the reference target).
Compilation compile(const ir::Module& m, const CompileSpec& spec);

}  // namespace sy::api
