// The tuning loop.
#include "tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "strategy/strategy.h"
#include "support/error.h"
#include "target/host.h"
#include "tune/machine_load.h"
#include "tune/measure.h"
#include "tune/records.h"
#include "tune/task.h"

namespace sy::tune {

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int threads_in_process() {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++n;
  return n;
}

// The KeptLayout attribute under which implementation `impl` of the task keeps all it can (its
// data, added tensors and result); "" if it keeps nothing.
std::string kept_layout_for(const Task& task, const target::Target& t, const std::string& impl) {
  const auto* fn = task.planned->as<ir::FunctionNode>();
  const ir::CallNode* anchor = strategy::anchor_of(*fn);
  if (!anchor) return "";
  const topi::OpImpl* i = strategy::implementation_named(anchor->op, impl);
  if (!i || !i->kept_layouts) return "";
  const topi::KeptLayoutSupport s = i->kept_layouts(*fn, t);
  // conv2d.blocked's channel blocks are kept without records only (native/kept_layouts.cpp).
  if (s.layout.empty() || (i->library.empty() && topi::blocked_layout_block(s.layout) > 0)) return "";
  topi::KeptLayout k;
  k.layout = s.layout;
  k.result = s.result;
  k.params = s.params;
  if (s.result)
    for (int p : s.with_result)
      if (std::find(k.params.begin(), k.params.end(), p) == k.params.end()) k.params.push_back(p);
  std::sort(k.params.begin(), k.params.end());
  return k.params.empty() && !k.result ? "" : topi::kept_layout_str(k);
}

std::vector<Record> kept_variants(const std::vector<Record>& records, const Task& task, const target::Target& t) {
  std::map<std::string, size_t> best_of;  // per implementation: its confirmed best, else its best
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (!r.kept_layout.empty() || (r.outcome != Outcome::Ok && r.outcome != Outcome::Cut)) continue;
    auto it = best_of.find(r.implementation);
    if (it == best_of.end()) {
      best_of[r.implementation] = i;
      continue;
    }
    const Record& b = records[it->second];
    if (r.confirmed != b.confirmed ? r.confirmed : r.median_ms < b.median_ms) it->second = i;
  }
  std::vector<Record> kept;
  for (const auto& [impl, i] : best_of) {
    const std::string layout = kept_layout_for(task, t, impl);
    if (layout.empty()) continue;
    Record r = records[i];
    r.kept_layout = layout;
    r.outcome = Outcome::Ok;
    r.confirmed = false;
    kept.push_back(r);
  }
  return kept;
}

// Kernels timed alone miss what they cost in the model: the other core's data at two threads, the
// caches their neighbours leave, the layouts kept between them. So the model itself decides,
// timed end to end: its kernels chosen by the records (keep_layouts weighing each kernel's two
// options), the kernels chosen as without records (the strategy's order and its chains: what the
// model ran before tuning) and, where the records timed kept layouts, every kernel that can keep
// them keeping them. When keeping everywhere beats the records' choices by more than the noise
// (2%, twice in a row), its kept records are written again marked model_chain, which compile then
// follows without weighing; when the defaults do, a copy of each workload's best record marked
// model_default, and compile leaves those workloads to the defaults. (MobileNetV2's records chose
// kernels faster alone that broke its NHWC chains: 10% slower than untuned, 2 threads.) Marks are
// per workload: they apply to every model of the file with the workload, the last check's stand.
void check_model_end_to_end(const ir::Module& m, const target::Target& t, const std::string& records_path,
                            const std::map<std::string, std::string>& validators, const TuneOptions& opts,
                            TuneSummary* sum) {
  if (opts.shards > 1 || !opts.model_check) return;  // a shard has only some of the model's records
  std::vector<Record> all;
  try {
    all = read_records(records_path);
  } catch (const Error&) {  // e.g. a line cut off by an interrupted write, now followed by others
    return;
  }
  const SelectedRecords sel = select_records(all, t, validators);
  std::set<std::string> model_workloads;
  for (const Task& task : extract_tasks(m, t)) model_workloads.insert(task.key);
  std::vector<Record> kept, best;
  bool chain_marked = false, default_marked = false;
  for (const auto& [w, rs] : sel.kept_by_workload)
    if (model_workloads.count(w)) {
      for (const Record& r : rs) chain_marked |= r.model_chain;
      for (const Record& r : rs)
        if (!r.model_chain) {
          kept.push_back(r);
          break;
        }
    }
  for (const auto& [w, rs] : sel.by_workload)
    if (model_workloads.count(w) && rs.front().outcome == Outcome::Ok) best.push_back(rs.front());
  for (const std::string& w : sel.defaults) default_marked |= model_workloads.count(w) > 0;
  if (best.empty()) return;
  // This run tuned some of the model's workloads (their older marks went with their older
  // records): a mark left on the others, or on a workload another model shares, describes
  // another set of records. The model is timed again, without them.
  SelectedRecords now = sel;
  if (default_marked || chain_marked) {
    std::vector<Record> keep;
    for (const Record& r : all)
      if (!((r.model_default || r.model_chain) && model_workloads.count(r.workload))) keep.push_back(r);
    write_records(records_path, keep);
    now = select_records(keep, t, validators);
  }
  native::CompileOptions chosen;
  chosen.target = t;
  chosen.chooser = records_chooser(now);
  native::CompileOptions untuned;
  untuned.target = t;
  std::vector<native::CompileOptions> ways = {chosen, untuned};
  if (!kept.empty()) {
    native::CompileOptions keeping = chosen;
    keeping.keep_all_layouts = true;
    ways.push_back(keeping);
  }
  MeasureOptions mo = opts.measure;
  mo.min_runs = 20;
  mo.min_seconds = 2;
  auto time_ways = [&] { return opts.time_model ? opts.time_model(m, ways) : time_models(m, ways, mo); };
  // Another way than the records' only beyond the noise of alternating medians, twice in a row
  // (a model whose ways compile alike must not be marked by a noisy moment).
  auto fastest = [](const std::vector<double>& ms) {
    size_t w = 0;
    for (size_t i = 1; i < ms.size(); ++i)
      if (ms[i] < ms[w] * 0.98) w = i;
    return w;
  };
  std::vector<double> ms, again;
  size_t way = 0;
  try {
    ms = time_ways();
    if (ms.size() == ways.size() && (way = fastest(ms)) != 0) {
      again = time_ways();
      if (again.size() != ways.size() || fastest(again) != way) way = 0;
    }
  } catch (const std::exception& e) {
    sum->layouts = std::string("end to end: not timed (") + e.what() + ")";
    return;
  }
  if (ms.size() != ways.size()) {
    sum->layouts = "end to end: not timed (the model failed to build or run)";
    return;
  }
  char buf[320];
  std::snprintf(buf, sizeof buf, "end to end: %.4g ms with the kernels chosen one by one by the records, %.4g ms as without records", ms[0],
                ms[1]);
  sum->layouts = buf;
  if (ms.size() > 2) {
    std::snprintf(buf, sizeof buf, ", %.4g ms keeping layouts wherever the records allow", ms[2]);
    sum->layouts += buf;
  }
  const bool unconfirmed = way == 0 && !again.empty();
  sum->layouts += way == 0 ? (unconfirmed ? ": one by one (a second timing did not confirm another way)" : ": one by one")
                  : way == 1 ? ": as without records (confirmed by a second timing; marked in the records)"
                             : ": keeping (confirmed by a second timing; marked in the records)";
  if (way == 0) return;
  std::vector<Record>& marks = way == 1 ? best : kept;
  for (Record& r : marks) {
    (way == 1 ? r.model_default : r.model_chain) = true;
    r.time = utc_now();
  }
  append_records(records_path, marks);
}

bool in_shard(const std::string& workload, int shard, int shards) {
  if (shards <= 1) return true;
  return static_cast<int>(std::stoull(workload.substr(0, 12), nullptr, 16) % static_cast<uint64_t>(shards)) == shard - 1;
}

TuneSummary tune(const ir::Module& m, const target::Target& t, const std::string& records_path,
                 const TuneOptions& opts, const std::function<void(const TuneProgress&)>& progress) {
  if (opts.shards < 1 || opts.shard < 1 || opts.shard > opts.shards)
    throw Error("--shard K/N needs 1 <= K <= N, got " + std::to_string(opts.shard) + "/" + std::to_string(opts.shards));
  if (opts.trials < 1) throw Error("--trials must be at least 1");
  // Candidates are run here: a target this CPU cannot run would only crash every one of them.
  if (std::string why = target::cannot_run_here(t, "tuning for it"); !why.empty()) throw Error(why);
  // Every candidate runs in a forked child. Threads of this process do not exist there, and a
  // child that enters OpenMP after this process's worker threads started waits for them forever
  // (each candidate would then hang until its timeout): refuse instead.
  if (const int n = threads_in_process(); n > 1)
    throw Error("tune: this process already runs " + std::to_string(n) +
                " threads (an OpenMP pool, once a model has run here); the candidates run in forked children, "
                "which would hang: tune from a process of its own (`switchyard tune`, or switchyard::tune, which "
                "starts one)");
  {  // the records file must be writable before minutes of tuning are spent
    std::ofstream probe(records_path, std::ios::app);
    if (!probe) throw Error(records_path + ": cannot write the records");
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  TuneSummary sum;
  const std::map<std::string, std::string> validators = current_validators();
  // Done: a workload whose tuning ended (its best candidates confirmed side by side) and that was
  // tuned with the candidates this run has: every implementation that lowers has a record (one
  // tuned with --no-externs is tuned again when externs are allowed), or, when --trials is below
  // their number (the guided search could not reach them all), as many records as trials. One
  // cut off by the time budget, or where every candidate failed, is tuned again.
  std::set<std::string> confirmed, kept_timed, busy;
  std::map<std::string, std::set<std::string>> measured_impls;
  std::map<std::string, int> measured;
  const std::vector<Record> earlier = read_records(records_path, &sum.partial_lines);
  // A write cut off (a tune killed mid-line): the next record appended would continue that line,
  // and the file would no longer read. It goes now.
  if (sum.partial_lines > 0) write_records(records_path, earlier);
  for (const Record& r : earlier) {
    if (r.target_key != t.key() || r.validators != validators || r.model_default) continue;
    if (r.others_cpus > 0 && opts.busy_cpus > 0) busy.insert(r.workload);
    if (!r.kept_layout.empty()) {
      kept_timed.insert(r.workload);
      continue;
    }
    if (r.outcome == Outcome::Ok && r.confirmed) confirmed.insert(r.workload);
    measured_impls[r.workload].insert(r.implementation);
    ++measured[r.workload];
  }
  auto is_done = [&](const Task& task, const Search& probe) {
    if (!confirmed.count(task.key) || busy.count(task.key)) return false;
    const std::set<std::string>& have = measured_impls[task.key];
    // Records made before implementations were timed with kept layouts lack that time.
    if (!kept_timed.count(task.key))
      for (const std::string& i : have)
        if (!kept_layout_for(task, t, i).empty()) return false;
    bool all = true;
    for (const std::string& i : probe.lowerable()) all &= have.count(i) > 0;
    return all || (opts.trials < static_cast<int>(probe.lowerable().size()) && measured[task.key] >= opts.trials);
  };

  std::vector<Task> all = extract_tasks(m, t);
  std::vector<Task*> todo;
  for (Task& task : all) {
    if (!in_shard(task.key, opts.shard, opts.shards)) continue;
    if (!opts.externs) {
      const ir::CallNode* anchor = strategy::anchor_of(*task.planned->as<ir::FunctionNode>());
      std::erase_if(task.implementations, [&](const std::string& n) { return !strategy::library_of(anchor->op, n).empty(); });
      if (task.implementations.empty()) continue;
    }
    Search probe(task, t, SearchKind::Guided, 0);
    // One implementation: something to choose only if its schedule has knobs.
    if (task.implementations.size() <= 1 && probe.space_size() <= 1) {
      ++sum.nothing_to_choose;
      continue;
    }
    ++sum.tasks;
    if (is_done(task, probe)) {
      ++sum.skipped_tuned;
      continue;
    }
    todo.push_back(&task);
  }
  std::stable_sort(todo.begin(), todo.end(), [](const Task* a, const Task* b) {
    return static_cast<double>(a->uses) * static_cast<double>(a->flops) >
           static_cast<double>(b->uses) * static_cast<double>(b->flops);
  });

  TuneProgress p;
  p.tasks = static_cast<int>(todo.size());
  p.total_trials = p.tasks * opts.trials;
  for (size_t ti = 0; ti < todo.size(); ++ti) {
    if (elapsed() > opts.time_budget_s) {
      sum.not_reached = static_cast<int>(todo.size() - ti);
      break;
    }
    const Task& task = *todo[ti];
    p.task = static_cast<int>(ti + 1);
    p.trial = 0;
    p.trials = opts.trials;
    p.current = &task;
    p.best_ms = 0;
    p.default_ms = 0;
    p.best.clear();
    p.last = nullptr;
    p.task_done = false;
    p.busy_cpus = 0;
    if (progress) progress(p);
    const MachineLoad load;
    std::unique_ptr<TaskBench> bench_ptr;
    try {
      bench_ptr = std::make_unique<TaskBench>(task, t, opts.measure);
    } catch (const std::exception& e) {
      sum.failures.push_back(task.description + ": skipped: " + e.what());
      ++sum.reference_failed;
      continue;
    }
    const TaskBench& bench = *bench_ptr;
    Search search(task, t, opts.search, opts.measure.seed + static_cast<uint32_t>(ti));
    std::vector<Record> records;
    bool out_of_time = false;
    for (int trial = 0; trial < opts.trials; ++trial) {
      if (elapsed() > opts.time_budget_s) {
        out_of_time = true;
        break;
      }
      std::optional<strategy::Choice> c = search.next();
      if (!c) break;
      Measurement meas = bench.measure(*c, p.best_ms);
      search.report(*c, meas);
      Record r;
      r.workload = task.key;
      r.op = task.op;
      r.description = task.description;
      r.target = t.str();
      r.target_key = t.key();
      r.implementation = c->implementation;
      r.knobs = c->knobs;
      r.median_ms = meas.median_ms;
      r.costs_ms = meas.costs_ms;
      r.outcome = meas.outcome;
      r.message = meas.message;
      r.max_error = meas.max_error;
      r.threads = opts.measure.threads > 0 ? opts.measure.threads : std::max(1, t.cores);
      r.uses = task.uses;
      r.flops = task.flops;
      r.validators = validators;
      r.time = utc_now();
      records.push_back(r);
      ++sum.candidates;
      switch (meas.outcome) {
        case Outcome::Ok:
          if (p.best_ms == 0 || meas.median_ms < p.best_ms) {
            p.best_ms = meas.median_ms;
            p.best = c->implementation + (c->knobs.empty() ? "" : " " + c->knobs);
          }
          break;
        case Outcome::Cut: ++sum.cut; break;
        case Outcome::Wrong: ++sum.wrong; break;
        case Outcome::BuildFailed: ++sum.build_failed; break;
        case Outcome::Crashed: ++sum.crashed; break;
        case Outcome::TimedOut: ++sum.timed_out; break;
      }
      if (meas.outcome != Outcome::Ok && meas.outcome != Outcome::Cut)
        sum.failures.push_back(task.description + ": " + c->implementation + " " + c->knobs + ": " +
                               outcome_name(meas.outcome) + ": " + meas.message);
      p.trial = trial + 1;
      ++p.total_trials_done;
      p.elapsed_s = elapsed();
      p.last = &records.back();
      const int left = (opts.trials - p.trial) + (p.tasks - p.task) * opts.trials;
      p.eta_s = std::min(p.elapsed_s / p.total_trials_done * left, std::max(0.0, opts.time_budget_s - p.elapsed_s));
      if (progress) progress(p);
    }
    // Confirm: the default (the first candidate) and the best three, timed again side by side.
    std::vector<size_t> pick;
    for (size_t i = 0; i < records.size(); ++i)
      if (records[i].outcome == Outcome::Ok) pick.push_back(i);
    std::stable_sort(pick.begin(), pick.end(),
                     [&](size_t x, size_t y) { return records[x].median_ms < records[y].median_ms; });
    if (pick.size() > 3) pick.resize(3);
    if (!records.empty() && records[0].outcome == Outcome::Ok && std::find(pick.begin(), pick.end(), 0) == pick.end())
      pick.push_back(0);
    // The best of each implementation that can keep its layouts with its neighbours'
    // (topi::OpImpl::kept_layouts), whether or not it is among the best alone (a candidate cut
    // short passed the check first: alone it lost by its reorders), is timed once more that way
    // beside the others: what it costs inside a chain of its calls, without its reorders (a
    // record of its own, which compile weighs with the neighbours' choices). Its best as
    // confirmed: when the side-by-side timing reorders an implementation's knobs, everything is
    // timed again with the kept variant of the new best (else compile kept its layouts with
    // knobs never timed kept: ResNet-50's 3x3 stride-2 512 conv, 0.84 ms alone, 2.0 ms in the
    // model).
    std::vector<Record> kept = kept_variants(records, task, t);
    if (!pick.empty() && !out_of_time) {
      bool timed = false;
      std::vector<Record> trying = kept;  // becomes `kept` once timed (a failed second timing keeps the first's)
      for (int round = 0; round < 2; ++round) {
        std::vector<strategy::Choice> again;
        for (size_t i : pick) {
          strategy::Choice c;
          c.implementation = records[i].implementation;
          c.knobs = records[i].knobs;
          again.push_back(c);
        }
        for (const Record& r : trying) {
          strategy::Choice c;
          c.implementation = r.implementation;
          c.knobs = r.knobs;
          c.kept_layout = r.kept_layout;
          again.push_back(c);
        }
        std::vector<Measurement> ms = opts.confirm ? opts.confirm(task, again) : bench.confirm(again);
        if (ms.size() != again.size()) break;
        timed = true;
        for (size_t j = 0; j < ms.size(); ++j) {
          Record& r = j < pick.size() ? records[pick[j]] : trying[j - pick.size()];
          r.median_ms = ms[j].median_ms;
          r.costs_ms = ms[j].costs_ms;
          r.confirmed = true;
        }
        kept = trying;
        trying = kept_variants(records, task, t);
        bool same = trying.size() == kept.size();
        for (size_t j = 0; same && j < trying.size(); ++j) same = trying[j].knobs == kept[j].knobs;
        if (same) break;
      }
      if (timed) {
        records.insert(records.end(), kept.begin(), kept.end());
        size_t best = pick[0];  // among the plain records: a kept one is never chosen alone
        for (size_t i : pick)
          if (records[i].median_ms < records[best].median_ms) best = i;
        p.best_ms = records[best].median_ms;
        p.best = records[best].implementation + (records[best].knobs.empty() ? "" : " " + records[best].knobs);
        p.default_ms = records[0].outcome == Outcome::Ok && records[0].confirmed ? records[0].median_ms : 0;
      }
    }
    // A task's trials may end early (space exhausted): the overall count shrinks accordingly.
    p.total_trials -= opts.trials - p.trial;
    if (const double others = load.others_cpus(); opts.busy_cpus > 0 && others > opts.busy_cpus) {
      for (Record& r : records) r.others_cpus = others;
      p.busy_cpus = others;
      ++sum.busy;
      sum.busy_cpus_max = std::max(sum.busy_cpus_max, others);
    }
    append_records(records_path, records);
    ++sum.tuned;
    p.task_done = true;
    p.last = nullptr;
    if (progress) progress(p);
  }
  // A workload tuned again (its records lacked kept-layout times, or another run's were cut
  // short) supersedes the file's older records of it, the end-to-end check's marks included:
  // without this, each resumed tune would grow the file by a copy. Before the check, which then
  // reads this run's records only.
  sum.superseded = drop_superseded_records(records_path, earlier.size());
  // The check after a run that tuned the model's kernels, all of them: a resumed run that tunes
  // nothing leaves the last check's outcome as it was (and takes seconds), and a run cut short by
  // the time budget checks when a later one has tuned the rest.
  if (sum.tuned > 0 && sum.not_reached == 0) check_model_end_to_end(m, t, records_path, validators, opts, &sum);
  sum.seconds = elapsed();
  return sum;
}

}  // namespace sy::tune
