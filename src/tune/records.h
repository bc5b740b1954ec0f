// Tuning records: one JSON object per line, one per measured candidate (AutoTVM's shape, with
// ORT TunableOp's validators). A record says which implementation and knobs ran a workload on a
// target, what it cost, and whether it failed (and how).
//
//   {"workload":"9f3c...","op":"nn.conv2d","desc":"nn.conv2d(1x64x56x56 float32, ...) -> ...",
//    "target":"cpu -isa=avx2 ...","target_key":"cpu avx2 cores=2","impl":"conv2d.blocked",
//    "knobs":"tile_oc=16 tile_pixels=6","median_ms":0.41,"costs_ms":[0.41,0.40,...],
//    "error":"ok","message":"","max_error":2e-6,"threads":2,"uses":3,"flops":231211008,
//    "validators":{"switchyard":"0.1.0","cc":"cc (Debian 12.2.0-14) 12.2.0"},"time":"2026-..."}
//
// A record applies to a compile only for the same workload and target key and equal validators;
// anything else is refused with a message saying what differs, never applied silently.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "strategy/strategy.h"
#include "target/target.h"

namespace sy::tune {

// How a candidate ended. Only "ok" records are ever applied.
enum class Outcome { Ok, Cut, Wrong, BuildFailed, Crashed, TimedOut };
const char* outcome_name(Outcome o);
std::optional<Outcome> outcome_from_name(const std::string& s);

struct Record {
  std::string workload, op, description;
  std::string target, target_key;
  std::string implementation, knobs;
  double median_ms = 0;
  std::vector<double> costs_ms;
  Outcome outcome = Outcome::Ok;
  std::string message;   // why it failed (first line), or "" for ok
  double max_error = 0;  // largest |candidate - reference| in units of the allowed error
  // Timed again beside the task's other best candidates in one process (see TaskBench::confirm);
  // confirmed records are preferred to unconfirmed ones of the same workload.
  bool confirmed = false;
  int threads = 0, uses = 0;
  int64_t flops = 0;
  // Non-empty: the implementation timed with its data and result kept in this layout (a
  // KeptLayout attribute, "nhwc in=0 out"), as between two of its calls; not checked (the same
  // primitive as the checked plain record, without its reorders), and never chosen alone.
  std::string kept_layout;
  // With kept_layout: a model ran faster end to end with every kernel that could keep layouts
  // keeping them than with its kernels chosen one by one (tune's check after the kernels).
  bool model_chain = false;
  // A copy of the workload's best record saying: a model ran faster end to end with its kernels
  // chosen as without records (the strategy's order and its chains) than with the records'
  // choices (tune's check after the kernels). Compile then leaves the workload to the defaults.
  bool model_default = false;
  // Above 0: CPUs' worth of time other processes took while its task was tuned (tune/
  // machine_load.h), more than TuneOptions::busy_cpus allows. The next tune times the task again.
  double others_cpus = 0;
  std::map<std::string, std::string> validators;
  std::string time;  // UTC, ISO 8601
};

// How candidates are timed (tune/measure.cpp): a record timed otherwise is not comparable.
// 2: each run finds its weights flushed from the caches, its activations just written by the
// pool's threads and its results last read by another thread, as in a model. Records timed
// before (all hot) have no "measure" validator.
inline constexpr const char* kMeasureVersion = "2";

// What this build would write: Switchyard's version, the schedules' version
// (strategy::kScheduleVersion), how candidates are timed (kMeasureVersion), the C compiler's
// identity and the extern libraries' versions (strategy::extern_libraries).
std::map<std::string, std::string> current_validators();

std::string to_json_line(const Record& r);
// sy::Error naming the line for a malformed record.
Record from_json_line(const std::string& line, const std::string& where);

// Every record of a file (sy::Error if unreadable or malformed). A missing file: none. With
// partial_last, a last line without its newline that does not parse (a write cut off) is
// skipped and counted there instead of being an error.
std::vector<Record> read_records(const std::string& path, int* partial_last = nullptr);
void append_records(const std::string& path, const std::vector<Record>& rs);

// Rewrites the file with records that superseded others: of its first `before` records (those
// already there when a tune began), those whose workload, target key and validators the later
// records tuned again (a record of a model's chain of kept layouts counts apart from the plain
// ones) are dropped; the rest, and every later record, are kept in order. Written to a temporary
// file and renamed over the old one. Returns how many records were dropped.
int drop_superseded_records(const std::string& path, size_t before);
// The file holding exactly these records (a temporary file renamed over it).
void write_records(const std::string& path, const std::vector<Record>& rs);

// The best ok record per (workload, target key, implementation): what merge keeps and what
// compile --explain shows side by side. Failures of a workload are kept (one per implementation)
// when it has no ok record of that implementation, so a resumed tune knows it was tried.
std::vector<Record> merge_records(const std::vector<Record>& rs);

// The records that may choose kernels for target t with these validators; refusals explained.
struct SelectedRecords {
  // workload -> its ok records (best first)
  std::map<std::string, std::vector<Record>> by_workload;
  // workload -> its records timed with kept layouts (Record::kept_layout), fastest first
  std::map<std::string, std::vector<Record>> kept_by_workload;
  // workloads left to the defaults (Record::model_default): no record chooses for them
  std::set<std::string> defaults;
  size_t used = 0;           // records accepted
  size_t other_target = 0;   // records for other targets
  size_t stale = 0;          // records with other validators
  std::string other_target_example, stale_example;  // what differed, for the message
};
SelectedRecords select_records(const std::vector<Record>& rs, const target::Target& t,
                          const std::map<std::string, std::string>& validators);

// What was refused, as one line ("" if nothing was): "records.jsonl: 412 records for target
// 'cpu avx2 cores=2' refused (this target is 'cpu avx512 cores=2')". Throws sy::Error with that
// message if the file has records and none apply.
std::string check_records(const SelectedRecords& a, const std::string& path, const target::Target& t);

// A chooser for native::CompileOptions from selected records (copied into it): the best record
// of the kernel's workload, with what each implementation's records say attached; nothing for a
// workload left to the defaults.
strategy::Chooser records_chooser(const SelectedRecords& a);

}  // namespace sy::tune
