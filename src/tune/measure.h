// Measuring one candidate (an implementation and its knobs) of a task: built, checked against
// the reference executor's output on the same random inputs, then timed. Each candidate runs in
// a child process, so one that crashes, hangs or exhausts memory is reported and the tuner goes
// on. The parent never runs a parallel region (OpenMP's threads do not survive fork).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "native/compile.h"
#include "strategy/strategy.h"
#include "support/tensor.h"
#include "target/target.h"
#include "tune/records.h"
#include "tune/task.h"

namespace sy::tune {

struct MeasureOptions {
  int threads = 0;           // 0: the target's cores
  double timeout_s = 120;    // per candidate, build included
  double reference_timeout_s = 600;  // the reference executor's run of the task (naive loops)
  int min_runs = 10;         // timed runs: at least this many and min_seconds, at most max_runs
  int max_runs = 200;
  double min_seconds = 0.25;
  uint32_t seed = 1;         // of the random inputs
};

struct Measurement {
  Outcome outcome = Outcome::Ok;
  double median_ms = 0;
  std::vector<double> costs_ms;
  std::string message;
  double max_error = 0;  // largest |got - want| / (atol/rtol + |want|) seen, in units of rtol
};

// The tolerance of the check (per dtype): |got - want| <= atol + rtol * |want| with f32 rtol
// 1e-3, atol 1e-4 x max(1, max|want|); f64 1e-9 likewise; integers and bool exact.
class TaskBench {
 public:
  // Computes the reference outputs in a child process; sy::Error if the reference fails.
  TaskBench(const Task& task, const target::Target& t, const MeasureOptions& opts);
  ~TaskBench();
  TaskBench(const TaskBench&) = delete;
  TaskBench& operator=(const TaskBench&) = delete;

  // best_ms > 0: a candidate whose first runs take more than twice that is cut short (Cut).
  Measurement measure(const strategy::Choice& candidate, double best_ms) const;

  // Times candidates that measure() found correct together in one child, alternating one run of
  // each, so that the machine's slow and fast phases (and a process's own speed, which varies
  // from process to process on some machines) fall on all of them alike. One Measurement per
  // candidate (Ok, median and costs), or empty if the child failed.
  std::vector<Measurement> confirm(const std::vector<strategy::Choice>& candidates) const;

 private:
  const Task& task_;
  target::Target target_;
  MeasureOptions opts_;
  std::vector<Tensor> inputs_, want_;
};

// Compiles m once per set of options in a child process and times the executables one run of
// each in turn (after warm-up), at least opts.min_runs and opts.min_seconds each, on seeded
// random inputs: the median ms of each, or empty if the child failed or timed out.
std::vector<double> time_models(const ir::Module& m, const std::vector<native::CompileOptions>& options,
                                const MeasureOptions& opts);

}  // namespace sy::tune
