// Tuning from the API: in a child process (`switchyard tune` beside the library, for programs
// whose OpenMP threads may have started), in this process (the command-line program), and
// merging records files.
#include <dlfcn.h>
#include <omp.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "access.h"
#include "switchyard/switchyard.h"
#include "support/temporary_name.h"
#include "target/target.h"
#include "tune/records.h"
#include "tune/task.h"
#include "tune/tuner.h"

namespace switchyard {

namespace {

// The `switchyard` program beside this library: PREFIX/lib/libswitchyard.so -> PREFIX/bin/switchyard
// (the build tree has the same shape); $SWITCHYARD_CLI overrides.
std::string cli_path() {
  if (const char* p = std::getenv("SWITCHYARD_CLI"); p && *p) return p;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cli_path), &info) || !info.dli_fname)
    throw Error("tune: cannot locate libswitchyard.so to find the switchyard program (set SWITCHYARD_CLI)");
  std::filesystem::path p = std::filesystem::path(info.dli_fname).parent_path().parent_path() / "bin" / "switchyard";
  if (!std::filesystem::exists(p))
    throw Error("tune: no switchyard program at " + p.string() + " (set SWITCHYARD_CLI to its path)");
  return p.string();
}

}  // namespace

std::string tune(const std::string& model, const std::string& records, const TuneOptions& opts) {
  if (records.empty()) throw Error("tune: a records file to write is required");
  std::vector<std::string> argv{cli_path(), "tune", model, "-o", records, "--target", opts.target,
                                "--trials", std::to_string(opts.trials), "--time-budget",
                                std::to_string(opts.time_budget_s), "--threads", std::to_string(opts.threads)};
  if (!opts.externs) argv.push_back("--no-externs");
  if (!opts.model_check) argv.push_back("--no-model-check");
  if (opts.allow_busy) argv.push_back("--allow-busy");
  argv.insert(argv.end(), {"--search", opts.search, "--timeout", std::to_string(opts.timeout_s)});
  if (opts.shards != 1) argv.insert(argv.end(), {"--shard", std::to_string(opts.shard) + "/" + std::to_string(opts.shards)});
  for (const auto& [name, shape] : opts.input_shapes) {
    std::string dims;
    for (int64_t d : shape) {
      if (!dims.empty()) dims += ',';
      dims += std::to_string(d);
    }
    argv.push_back("--input-shape");
    argv.push_back(name + "=" + dims);
  }
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) throw Error("tune: cannot create pipes");
  pid_t pid = fork();
  if (pid < 0) throw Error("tune: cannot start " + argv[0]);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  // Both pipes drained together (a child blocked on a full stderr would never finish stdout).
  std::string stdout_text, stderr_text;
  char buf[4096];
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    fd_set fds;
    FD_ZERO(&fds);
    if (out_open) FD_SET(out[0], &fds);
    if (err_open) FD_SET(err[0], &fds);
    if (select(std::max(out[0], err[0]) + 1, &fds, nullptr, nullptr, nullptr) < 0) break;
    for (auto [fd, open, text] : {std::tuple<int, bool*, std::string*>{out[0], &out_open, &stdout_text},
                                  std::tuple<int, bool*, std::string*>{err[0], &err_open, &stderr_text}}) {
      if (!*open || !FD_ISSET(fd, &fds)) continue;
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) *open = false;
      else text->append(buf, static_cast<size_t>(n));
    }
  }
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  auto last_line = [](const std::string& t) {
    std::string s = t;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    size_t nl = s.find_last_of('\n');
    s = nl == std::string::npos ? s : s.substr(nl + 1);
    const std::string prefix = "switchyard: error: ";
    return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
  };
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = last_line(stderr_text);
    throw Error(why.empty() ? "tune: " + argv[0] + " failed (exit status " + std::to_string(status) + ")" : why);
  }
  std::istringstream lines(stdout_text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("tuned ", 0) == 0) return line;
  return last_line(stdout_text);
}

TuneResult tune_in_process(const std::string& model, const std::string& records, const TuneOptions& opts) {
  return guarded([&] {
    // The tuner forks a measurement process per candidate; OpenMP's thread pool does not survive
    // fork, so this process keeps to one thread (the children set their own).
    omp_set_num_threads(1);
    if (records.empty()) throw Error("tune: a records file to write is required");
    const sy::target::Target tgt = sy::target::parse(opts.target);
    if (tgt.kind != sy::target::Kind::Cpu) throw Error("tune needs a cpu target, not '" + tgt.str() + "'");
    if (opts.search != "guided" && opts.search != "random")
      throw Error("tune: search '" + opts.search + "': expected guided or random");
    if (opts.shards < 1 || opts.shard < 1 || opts.shard > opts.shards)
      throw Error("tune: shard " + std::to_string(opts.shard) + " of " + std::to_string(opts.shards) +
                  ": expected 1 <= shard <= shards");
    sy::tune::TuneOptions o;
    o.trials = opts.trials;
    o.externs = opts.externs;
    o.model_check = opts.model_check;
    if (opts.allow_busy) o.busy_cpus = 0;
    o.time_budget_s = opts.time_budget_s;
    o.search = opts.search == "random" ? sy::tune::SearchKind::Random : sy::tune::SearchKind::Guided;
    o.shard = opts.shard;
    o.shards = opts.shards;
    o.measure.threads = opts.threads;
    o.measure.timeout_s = opts.timeout_s;
    sy::ir::Module m = load_any(model, opts.input_shapes);
    if (opts.on_start) opts.on_start();
    std::function<void(const sy::tune::TuneProgress&)> progress;
    if (opts.progress)
      progress = [&](const sy::tune::TuneProgress& p) {
        TuneProgress q;
        q.task = p.task;
        q.tasks = p.tasks;
        q.trial = p.trial;
        q.trials = p.trials;
        q.total_trials_done = p.total_trials_done;
        q.total_trials = p.total_trials;
        q.elapsed_s = p.elapsed_s;
        q.eta_s = p.eta_s;
        if (p.current) {
          q.description = p.current->description;
          q.op = p.current->op;
          q.uses = p.current->uses;
          q.flops = p.current->flops;
        }
        q.best_ms = p.best_ms;
        q.best = p.best;
        q.default_ms = p.default_ms;
        q.task_done = p.task_done;
        q.busy_cpus = p.busy_cpus;
        opts.progress(q);
      };
    sy::tune::TuneSummary s = sy::tune::tune(m, tgt, records, o, progress);
    TuneResult r;
    r.tasks = s.tasks;
    r.skipped_tuned = s.skipped_tuned;
    r.tuned = s.tuned;
    r.not_reached = s.not_reached;
    r.nothing_to_choose = s.nothing_to_choose;
    r.reference_failed = s.reference_failed;
    r.partial_lines = s.partial_lines;
    r.superseded = s.superseded;
    r.busy = s.busy;
    r.busy_cpus_max = s.busy_cpus_max;
    r.candidates = s.candidates;
    r.wrong = s.wrong;
    r.crashed = s.crashed;
    r.build_failed = s.build_failed;
    r.cut = s.cut;
    r.timed_out = s.timed_out;
    r.seconds = s.seconds;
    r.failures = s.failures;
    r.layouts = s.layouts;
    return r;
  });
}

MergeResult merge_records(const std::vector<std::string>& inputs, const std::string& output) {
  return guarded([&] {
    std::vector<sy::tune::Record> all;
    for (const std::string& f : inputs) {
      // An empty file is fine (a shard may hold no task); a missing one is a mistake.
      std::error_code ec;
      if (!std::filesystem::exists(f, ec)) throw Error(f + ": no such records file");
      std::vector<sy::tune::Record> rs = sy::tune::read_records(f);
      all.insert(all.end(), rs.begin(), rs.end());
    }
    std::vector<sy::tune::Record> merged = sy::tune::merge_records(all);
    const std::string tmp = sy::temporary_name(output);
    sy::tune::append_records(tmp, merged);
    if (std::rename(tmp.c_str(), output.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw Error(output + ": cannot write");
    }
    return MergeResult{static_cast<int64_t>(all.size()), static_cast<int64_t>(merged.size())};
  });
}

}  // namespace switchyard
