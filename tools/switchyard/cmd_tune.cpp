// `switchyard tune MODEL --target T -o records.jsonl`: measure the implementations and knobs of
// every native kernel and record them; `switchyard records merge A B ... -o C`.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <switchyard/target.h>

#include "backend_selection.h"
#include "cli_common.h"

namespace switchyard::cli {
namespace {

struct TuneArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string target = "cpu";
  std::string output;
  int trials = 12;
  bool no_externs = false;
  bool no_model_check = false;
  bool allow_busy = false;
  double budget = 840;
  std::string search = "guided";
  std::string shard = "1/1";
  int threads = 0;
  double timeout = 120;
};

std::string bar(double frac, int width) {
  const int n = static_cast<int>(std::max(0.0, std::min(1.0, frac)) * width + 0.5);
  return "[" + std::string(static_cast<size_t>(n), '#') + std::string(static_cast<size_t>(width - n), '.') + "]";
}

std::string mmss(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

std::string gflops(int64_t flops, double ms) {
  return ms > 0 && flops > 0 ? fixed(static_cast<double>(flops) / (ms * 1e6), 1) + " GFLOP/s" : "";
}

int run_tune(const TuneArgs& a) {
  // Tuning runs in this process (tune_in_process), which must not have started OpenMP threads:
  // nothing here compiles or runs a model before it.
  const TargetInfo tgt = target_info(a.target);
  if (tgt.kind != "cpu") throw Error("tune needs a cpu target, not '" + tgt.str + "'");
  TuneOptions o;
  o.target = a.target;
  o.trials = a.trials;
  o.externs = !a.no_externs;
  o.model_check = !a.no_model_check;
  o.allow_busy = a.allow_busy;
  o.time_budget_s = a.budget;
  o.search = a.search;
  {
    int used = 0;
    if (std::sscanf(a.shard.c_str(), "%d/%d%n", &o.shard, &o.shards, &used) != 2 ||
        used != static_cast<int>(a.shard.size()) || o.shards < 1 || o.shard < 1 || o.shard > o.shards)
      throw Error("--shard: expected K/N with 1 <= K <= N (e.g. 2/4), got '" + a.shard + "'");
  }
  o.threads = a.threads;
  o.timeout_s = a.timeout;
  o.input_shapes = input_shapes(a.input_shapes);
  Progress progress;
  progress.show("loading " + a.model + "...");
  o.on_start = [&] {
    progress.show("finding the tasks...");
    const std::vector<std::string> externs = extern_libraries();
    std::cout << "tuning " << a.model << " for " << tgt.str << "\n"
              << "  " << a.trials << " candidates per task at most, time budget " << mmss(a.budget) << ", search "
              << a.search << (o.shards > 1 ? ", shard " + a.shard : "") << "; records: " << a.output << "\n"
              << "  extern implementations: "
              << (a.no_externs ? "none (--no-externs)" : externs.empty() ? "none in this build" : join(externs, ", "))
              << "\n";
    std::cout.flush();
  };
  o.progress = [&](const TuneProgress& p) {
    if (p.task_done) {
      progress.clear();
      std::cout << "[" << p.task << "/" << p.tasks << "] " << p.description << " x" << p.uses
                << ": " << p.trial << " candidates; best "
                << (p.best_ms > 0 ? p.best + "  " + ms(p.best_ms) + "  " + gflops(p.flops, p.best_ms)
                                  : "none (every candidate failed)")
                << (p.default_ms > 0 ? "  (default " + fixed(p.default_ms / p.best_ms, 2) + "x that)" : "")
                << (p.busy_cpus > 0 ? "  [busy: other processes took " + fixed(p.busy_cpus, 1) + " CPUs]" : "") << "\n";
      std::cout.flush();
      return;
    }
    const double overall = p.total_trials ? static_cast<double>(p.total_trials_done) / p.total_trials : 0;
    progress.show("task " + std::to_string(p.task) + "/" + std::to_string(p.tasks) + " " +
                  bar(static_cast<double>(p.trial) / std::max(1, p.trials), 12) + " " + std::to_string(p.trial) + "/" +
                  std::to_string(p.trials) + "  all " + bar(overall, 20) + " " + mmss(p.elapsed_s) + " ETA " +
                  mmss(p.eta_s) + (p.best_ms > 0 ? "  best " + gflops(p.flops, p.best_ms) : "") + "  " + p.op);
  };
  TuneResult s = tune_in_process(a.model, a.output, o);
  progress.clear();
  std::cout << "tuned " << s.tuned << " of " << s.tasks << " tasks in " << mmss(s.seconds) << " (" << s.candidates
            << " candidates";
  if (s.cut) std::cout << ", " << s.cut << " cut short at > 2x the best";
  std::cout << ")";
  if (s.skipped_tuned) std::cout << "; " << s.skipped_tuned << " already in the records";
  if (s.nothing_to_choose)
    std::cout << "; " << s.nothing_to_choose << (s.nothing_to_choose == 1 ? " kernel has" : " kernels have")
              << " nothing to choose";
  std::cout << "\n";
  if (!s.layouts.empty()) std::cout << s.layouts << "\n";
  if (s.partial_lines)
    std::cout << "note: the last line of " << a.output << " was cut off (an interrupted write); dropped\n";
  if (s.superseded)
    std::cout << "records: " << s.superseded << " older records of the kernels tuned again dropped from " << a.output
              << "\n";
  if (s.reference_failed)
    std::cout << s.reference_failed << " tasks skipped: the reference executor could not run them (below)\n";
  if (s.busy)
    std::cout << "warning: " << s.busy << " of " << s.tuned << " tasks were timed while other processes took up to "
              << fixed(s.busy_cpus_max, 1) << " CPUs: their times are not the kernels' alone (a thread waits for one "
              << "the scheduler gave away); run the same command on a quiet machine and it times them again\n";
  if (s.not_reached)
    std::cout << "time budget reached: " << s.not_reached << " tasks not tuned; run the same command again to go on\n";
  if (s.wrong || s.crashed || s.build_failed || s.timed_out || s.reference_failed) {
    std::cout << "disqualified: " << s.wrong << " wrong (differ from the reference), " << s.crashed << " crashed, "
              << s.timed_out << " timed out, " << s.build_failed << " did not build:\n";
    for (const std::string& f : s.failures) std::cout << "  " << f << "\n";
  }
  std::cout << "apply with: switchyard compile " << a.model << " --target '" << a.target << "' --records " << a.output
            << " -o model.sya\n";
  return 0;
}

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
};

int run_merge(const MergeArgs& a) {
  MergeResult r = merge_records(a.inputs, a.output);
  std::cout << "merged " << r.read << " records from " << a.inputs.size() << " files into " << r.merged
            << " (the best per workload, target and implementation): " << a.output << "\n";
  return 0;
}

}  // namespace

Command add_tune_command(CLI::App& root) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* c = root.add_subcommand("tune", "Measure each native kernel's implementations and knobs; write tuning records");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy or zoo:NAME")->required();
  c->add_option("-o,--output", args->output, "records file (JSON lines); appended to, and resumed from")->required();
  c->add_option("--input-shape", args->input_shapes, "NAME=D1,D2,...: static shape of an input")->type_name("NAME=SHAPE");
  c->add_option("--target", args->target, kTargetHelp)->capture_default_str();
  c->add_option("--trials", args->trials, "candidates per task at most")->capture_default_str()->check(CLI::Range(1, 100000));
  c->add_option("--time-budget", args->budget, "seconds; no candidate is started after this")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--search", args->search, "guided (defaults, then single-knob steps from the best) or random")
      ->capture_default_str()
      ->check(CLI::IsMember({"guided", "random"}));
  c->add_option("--shard", args->shard, "K/N: tune only shard K of N (by workload key); merge the shards' files")
      ->capture_default_str();
  c->add_flag("--no-externs", args->no_externs,
              "candidates are Switchyard's own implementations only (no library's extern implementation)");
  c->add_flag("--no-model-check", args->no_model_check,
              "skip the check after the kernels (a run that tuned some): the model timed end to end with the "
              "records' choices, as without records and keeping layouts; another way faster by 2%, twice, is "
              "marked in the records and compile follows it");
  c->add_flag("--allow-busy", args->allow_busy,
              "keep as tuned the kernels timed while other processes kept the CPUs busy (by default their records "
              "are marked and the next run times them again)");
  c->add_option("--threads", args->threads, "threads a candidate runs on (0: the target's cores)")->capture_default_str();
  c->add_option("--timeout", args->timeout, "seconds per candidate (build included) before it is killed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->footer(
      "Each candidate is built, checked against the reference executor on random inputs (a wrong one is\n"
      "disqualified and reported) and timed (median; one whose first runs take > 2x the best is cut short),\n"
      "in a process of its own: a crash or a hang is reported and tuning goes on. Workloads already in the\n"
      "records for this target and build are skipped, so an interrupted run resumes.\n"
      "Example: switchyard tune model.onnx -o records.jsonl && switchyard compile model.onnx --records records.jsonl -o m.sya\n"
      "Farming out: N machines each run --shard K/N (e.g. K = JOB_COMPLETION_INDEX+1 of a Kubernetes Indexed\n"
      "Job, or SLURM_ARRAY_TASK_ID of a Slurm array), then: switchyard records merge shard*.jsonl -o records.jsonl");
  return {c, [args] { return run_tune(*args); }};
}

Command add_records_command(CLI::App& root) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* c = root.add_subcommand("records", "Work with tuning records");
  c->require_subcommand(1);
  CLI::App* merge = c->add_subcommand("merge", "Merge records files, keeping the best per workload, target and implementation");
  merge->add_option("FILES", args->inputs, "records files")->required();
  merge->add_option("-o,--output", args->output, "merged records file")->required();
  return {c, [args] { return run_merge(*args); }};
}

}  // namespace switchyard::cli
