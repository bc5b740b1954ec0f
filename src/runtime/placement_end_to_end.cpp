// The end-to-end check of a measured placement against the single choices.
#include "runtime/placement_end_to_end.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <map>

#include "backends/reference/executor.h"
#include "ir/printer.h"
#include "runtime/compiled_model.h"
#include "runtime/region_timing.h"
#include "support/error.h"
#include "support/random_tensor.h"

namespace sy::runtime {

namespace {

struct Candidate {
  std::string name;  // "measured", a backend's name (it alone), "native"
  partition::PartitionResult placement;
  CompiledModel model;
};

std::string structure(const ir::Module& m) {
  ir::PrintOptions po;
  po.constant_data = false;
  return ir::print_module(m, po);
}

std::string ms_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", v);
  return b;
}

// A candidate's name as the line says it: "onednn alone", "measured", "native".
std::string alone(const std::string& name) { return name == "measured" || name == "native" ? name : name + " alone"; }

}  // namespace

std::string end_to_end_line(const WholeModelTiming& w) {
  if (w.winner.empty()) return "";
  std::string s = "placement: end to end:";
  for (const WholeModelTiming::Candidate& c : w.candidates) {
    s.append(" ").append(alone(c.name)).append(" ");
    if (!c.same_as.empty()) s.append("(the same placement as ").append(alone(c.same_as)).append(")");
    else if (c.failure.empty()) s.append(ms_text(c.ms));
    else s.append("not timed (").append(c.failure).append(")");
    s += ",";
  }
  s.pop_back();
  s += w.winner == "measured" ? ": the measured placement kept" : ": " + alone(w.winner) + " taken";
  if (w.from_records) s += " (from records)";
  return s + "\n";
}

partition::PartitionResult check_end_to_end(const ir::Module& model, const partition::PartitionOptions& popts,
                                            const PlacementOptions& opts, partition::PartitionResult measured,
                                            PlacementRecords& records, WholeModelTiming* out) {
  WholeModelTiming w;
  std::string asked = "end to end:";
  for (const backends::Backend* b : popts.backends) asked += " " + b->name();
  const std::string key = PlacementRecords::key(model, asked, opts.threads, opts.split);
  // The single choices, each partitioned as the rules would with that backend alone.
  std::vector<Candidate> cs;
  auto add = [&cs](std::string name, partition::PartitionResult p) {
    cs.emplace_back();
    cs.back().name = std::move(name);
    cs.back().placement = std::move(p);
  };
  add("measured", std::move(measured));
  for (const backends::Backend* b : popts.backends) add(b->name(), partition::partition_module(model, partition::alone(popts, *b)));
  {
    partition::PartitionOptions o;  // no backend: every node native
    add("native", partition::partition_module(model, o));
  }
  auto finish = [&](size_t winner) {
    w.winner = cs[winner].name;
    if (out) *out = w;
    return std::move(cs[winner].placement);
  };
  const std::string measured_structure = structure(cs[0].placement.module);
  // A candidate placed as an earlier one is that one's time: not built or timed again.
  std::map<std::string, size_t> first{{measured_structure, 0}};
  std::vector<bool> same(cs.size(), false);
  for (size_t i = 0; i < cs.size(); ++i) {
    std::string same_as;
    if (i > 0) {
      auto [at, fresh] = first.emplace(structure(cs[i].placement.module), i);
      same[i] = !fresh;
      if (same[i]) same_as = cs[at->second].name;
    }
    w.candidates.push_back({cs[i].name, 0, "", same_as});
  }

  // A stored decision: its winner, if that is still one of the candidates.
  if (std::optional<PlacementRecords::EndToEnd> stored = records.end_to_end(key)) {
    for (size_t i = 0; i < cs.size(); ++i)
      if (cs[i].name == stored->winner && !same[i]) {
        w.from_records = true;
        for (WholeModelTiming::Candidate& c : w.candidates) {
          auto t = stored->ms.find(c.name);
          if (t != stored->ms.end()) c.ms = t->second;
          else if (c.same_as.empty()) c.failure = "no time in the records";
        }
        return finish(i);
      }
  }
  for (const ir::Expr& p : model.main().params)
    if (!ir::is_tensor(p->type) || !is_float(ir::dtype_of(p))) {
      w.candidates.resize(1);
      w.candidates[0].failure = "inputs that are not float: random values may not be valid ones";
      return finish(0);
    }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < model.main().params.size(); ++i) {
    const ir::Expr& p = model.main().params[i];
    inputs.push_back(random_tensor(ir::shape_of(p), ir::dtype_of(p), 2000 + i));
  }
  Result<std::vector<Tensor>> want = reference::run_module(model, inputs);
  if (!want.is_ok()) {
    w.candidates[0].failure = "the reference executor failed: " + want.status().message();
    return finish(0);
  }
  std::vector<size_t> timed;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (same[i]) continue;
    WholeModelTiming::Candidate& c = w.candidates[i];
    if (opts.progress) opts.progress("placing: the whole model, " + cs[i].name + (i == 0 || cs[i].name == "native" ? "" : " alone"));
    try {
      cs[i].model = build_runnable(cs[i].placement.module, popts.backends, opts.native);
      const double err = relative_error(cs[i].model.run(inputs, opts.threads), *want);
      if (err > opts.tolerance) {
        char b[96];
        std::snprintf(b, sizeof b, "results differ from the reference (relative error %.3g)", err);
        c.failure = b;
      }
    } catch (const std::exception& e) {
      c.failure = std::string("failed (") + e.what() + ")";
    }
    if (c.failure.empty()) timed.push_back(i);
  }
  // Nothing ran right: the measured placement stays (its regions were checked one by one), and
  // compiling it will say what fails.
  if (timed.empty()) return finish(0);
  std::vector<std::function<void()>> runs;
  std::vector<std::optional<double>> injected;
  for (size_t i : timed) {
    runs.push_back([&, i] { cs[i].model.run(inputs, opts.threads); });
    injected.push_back(opts.cost ? opts.cost("model", cs[i].name) : std::nullopt);
  }
  std::vector<double> m;
  try {
    m = time_alternately(runs, injected, opts);
  } catch (const std::exception& e) {
    w.candidates[0].failure = std::string("failed while timed (") + e.what() + ")";
    return finish(0);
  }
  size_t best = timed[0];
  double best_ms = m[0];
  for (size_t k = 0; k < timed.size(); ++k) {
    w.candidates[timed[k]].ms = m[k];
    records.add(key, "the whole model", cs[timed[k]].name == "measured" ? "measured" : "alone:" + cs[timed[k]].name, m[k],
                tune::Outcome::Ok, "", 0, {}, opts.threads);
  }
  // The measured placement keeps the model unless a single choice beats it beyond the margin; if
  // it failed as a whole (its regions were checked alone), the fastest correct single choice.
  const bool measured_ok = timed[0] == 0;
  const double bar = measured_ok ? m[0] * (1 - opts.others_margin) : INFINITY;
  if (!measured_ok) best_ms = INFINITY;
  for (size_t k = measured_ok ? 1 : 0; k < timed.size(); ++k)
    if (m[k] < std::min(bar, best_ms)) {
      best = timed[k];
      best_ms = m[k];
    }
  records.add(key, "the whole model", "winner:" + cs[best].name, best_ms, tune::Outcome::Ok, "", 0, {}, opts.threads);
  return finish(best);
}

}  // namespace sy::runtime
