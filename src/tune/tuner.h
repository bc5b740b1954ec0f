// The tuner: for each task of a model (a distinct native kernel with something to choose), the
// search proposes candidates, each is measured (checked against the reference, timed) and every
// measurement becomes a record. Tasks are taken by weight (calls per run x FLOPs) so that a time
// budget cuts the least important; workloads the records file already has for this target and
// build are skipped (a re-run resumes; a workload counts as tuned once its best candidates were
// confirmed); --shard K/N takes the tasks whose key hashes to K.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "target/target.h"
#include "tune/measure.h"
#include "tune/records.h"
#include "tune/search.h"
#include "tune/task.h"

namespace sy::tune {

struct TuneOptions {
  int trials = 12;              // candidates per task at most
  double time_budget_s = 840;   // no new candidate is started after this
  SearchKind search = SearchKind::Guided;
  int shard = 1, shards = 1;    // this is shard `shard` of `shards` (1-based)
  bool externs = true;          // false: no extern implementation (OpImpl::library) is a candidate
  bool model_check = true;      // the end-to-end check after a run that tuned kernels (check_model_end_to_end)
  // A task during which other processes took more than this many CPUs on average (tune/
  // machine_load.h) has its records marked (Record::others_cpus), and the next run times it
  // again. <= 0: the load is not looked at, and marked records count as tuned.
  double busy_cpus = 0.25;
  MeasureOptions measure;
  // The end-to-end check's timing of the model compiled each way (in this order: the records'
  // choices, as without records, keeping layouts where the records allow): median ms of each.
  // Null: time_models (a child process); tests inject times here.
  std::function<std::vector<double>(const ir::Module&, const std::vector<native::CompileOptions>&)> time_model;
  // The side-by-side timing of a task's best candidates and kept variants (TaskBench::confirm).
  // Null: TaskBench::confirm; tests inject times here.
  std::function<std::vector<Measurement>(const Task&, const std::vector<strategy::Choice>&)> confirm;
};

// What the progress callback is told (after each candidate, and at each task's start and end).
struct TuneProgress {
  int task = 0, tasks = 0;            // 1-based index of the task being tuned, of how many
  int trial = 0, trials = 0;          // candidates measured in this task, of at most how many
  int total_trials_done = 0, total_trials = 0;
  double elapsed_s = 0, eta_s = 0;
  const Task* current = nullptr;
  double best_ms = 0;                 // best ok candidate of this task so far (0: none)
  std::string best;                   // "impl knobs"
  double default_ms = 0;              // at a task's end: the default's time beside the best's (0: unknown)
  const Record* last = nullptr;       // the record just made (null at a task's start)
  bool task_done = false;
  double busy_cpus = 0;               // at a task's end: CPUs other processes took, when too many (Record::others_cpus)
};

struct TuneSummary {
  int tasks = 0;             // with something to choose, in this shard
  int skipped_tuned = 0;     // already in the records
  int tuned = 0;
  int not_reached = 0;       // left when the time budget ran out
  int nothing_to_choose = 0; // one implementation, no knobs
  int reference_failed = 0;  // tasks skipped: the reference executor could not run them
  int partial_lines = 0;     // a truncated last line of the records file, ignored
  int candidates = 0, wrong = 0, crashed = 0, build_failed = 0, cut = 0, timed_out = 0;
  double seconds = 0;
  std::vector<std::string> failures;  // "task: impl knobs: outcome: message", for the summary
  std::string layouts;  // the end-to-end check of the records' choices (see tune()), "" when none ran
  int superseded = 0;   // older records of workloads tuned again, dropped from the file
  int busy = 0;              // tasks timed while other processes took more than busy_cpus
  double busy_cpus_max = 0;  // the most CPUs other processes took during one of them
};

// Appends the records to records_path as each task ends. Call it from a process of one thread
// (as `switchyard tune` is: it keeps to one thread itself): GNU OpenMP's worker threads do not
// survive fork, and a measurement child of a process that ran a parallel region on more threads
// deadlocks in its first one. sy::Error when the process has more than one thread.
TuneSummary tune(const ir::Module& m, const target::Target& t, const std::string& records_path,
                 const TuneOptions& opts, const std::function<void(const TuneProgress&)>& progress = nullptr);

// The records to time a task's implementations with their layouts kept (one per implementation
// that can keep them, topi::OpImpl::kept_layouts): copies of each one's best plain record among
// `records`, the confirmed ones first (timed side by side), with kept_layout set.
std::vector<Record> kept_variants(const std::vector<Record>& records, const Task& task, const target::Target& t);

// Threads of this process (/proc/self/task); 0 if unknown.
int threads_in_process();

// Whether the workload key falls into shard `shard` of `shards` (1-based).
bool in_shard(const std::string& workload, int shard, int shards);

}  // namespace sy::tune
