// Tuning records: JSON lines, validators, merging and the chooser that applies them.
#include "tune/records.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "codegen/c/compiler.h"
#include "codegen/c/hooks.h"
#include "strategy/externs.h"
#include "support/error.h"
#include "switchyard/version.h"
#include "tune/task.h"

namespace sy::tune {

namespace {
constexpr const char* kOutcomes[] = {"ok", "cut", "wrong", "build-failed", "crashed", "timed-out"};
}

const char* outcome_name(Outcome o) { return kOutcomes[static_cast<int>(o)]; }

std::optional<Outcome> outcome_from_name(const std::string& s) {
  for (int i = 0; i < 6; ++i)
    if (s == kOutcomes[i]) return static_cast<Outcome>(i);
  return std::nullopt;
}

namespace {
std::string codegen_identities() {
  std::string s;
  for (const std::string& n : codegen::codegen_names())
    if (const codegen::CodegenHook* h = codegen::find_codegen_hook(n); h && h->identity)
      s += (s.empty() ? "" : ", ") + n + "=" + h->identity();
  return s;
}
}  // namespace

std::map<std::string, std::string> current_validators() {
  return {{"switchyard", SWITCHYARD_VERSION},
          {"schedules", strategy::kScheduleVersion},
          {"measure", kMeasureVersion},
          {"cc", codegen::compiler_identity()},
          // The codegen hooks built in and their versions (a -codegen target's kernels are theirs).
          {"codegens", codegen_identities()},
          // Which extern libraries (and versions) the build has: a record may choose one.
          {"libraries", strategy::extern_libraries()}};
}

std::string to_json_line(const Record& r) {
  nlohmann::ordered_json j;
  j["workload"] = r.workload;
  j["op"] = r.op;
  j["desc"] = r.description;
  j["target"] = r.target;
  j["target_key"] = r.target_key;
  j["impl"] = r.implementation;
  j["knobs"] = r.knobs;
  // Four significant digits, and the first 32 runs: the timer's noise is larger than that, and a
  // model's records stay well under a megabyte.
  auto round4 = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::strtod(buf, nullptr);
  };
  j["median_ms"] = round4(r.median_ms);
  std::vector<double> costs;
  for (size_t i = 0; i < r.costs_ms.size() && i < 32; ++i) costs.push_back(round4(r.costs_ms[i]));
  j["costs_ms"] = costs;
  j["error"] = outcome_name(r.outcome);
  j["message"] = r.message;
  j["max_error"] = std::isfinite(r.max_error) ? r.max_error : 1e30;  // JSON has no infinity
  j["confirmed"] = r.confirmed;
  j["threads"] = r.threads;
  j["uses"] = r.uses;
  j["flops"] = r.flops;
  j["validators"] = r.validators;
  j["time"] = r.time;
  if (!r.kept_layout.empty()) j["kept_layout"] = r.kept_layout;
  if (r.model_chain) j["model_chain"] = true;
  if (r.model_default) j["model_default"] = true;
  if (r.others_cpus > 0) j["others_cpus"] = r.others_cpus;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Record from_json_line(const std::string& line, const std::string& where) {
  Record r;
  try {
    nlohmann::json j = nlohmann::json::parse(line);
    r.workload = j.at("workload").get<std::string>();
    r.op = j.value("op", "");
    r.description = j.value("desc", "");
    r.target = j.at("target").get<std::string>();
    r.target_key = j.at("target_key").get<std::string>();
    r.implementation = j.at("impl").get<std::string>();
    r.knobs = j.value("knobs", "");
    r.median_ms = j.at("median_ms").get<double>();
    r.costs_ms = j.value("costs_ms", std::vector<double>{});
    std::optional<Outcome> o = outcome_from_name(j.at("error").get<std::string>());
    if (!o) throw Error("unknown error kind '" + j.at("error").get<std::string>() + "'");
    r.outcome = *o;
    r.message = j.value("message", "");
    r.max_error = j.contains("max_error") && j["max_error"].is_number() ? j["max_error"].get<double>() : 0.0;
    r.confirmed = j.value("confirmed", false);
    r.threads = j.value("threads", 0);
    r.uses = j.value("uses", 0);
    r.flops = j.value("flops", int64_t{0});
    r.validators = j.at("validators").get<std::map<std::string, std::string>>();
    r.time = j.value("time", "");
    r.kept_layout = j.value("kept_layout", "");
    r.model_chain = j.value("model_chain", false);
    r.model_default = j.value("model_default", false);
    r.others_cpus = j.value("others_cpus", 0.0);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not a tuning record: " + e.what());
  } catch (const Error& e) {
    throw Error(where + ": not a tuning record: " + e.what());
  }
  if (r.workload.empty() || r.implementation.empty()) throw Error(where + ": a tuning record needs a workload and impl");
  return r;
}

std::vector<Record> read_records(const std::string& path, int* partial_last) {
  std::vector<Record> out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;  // no file yet: no records
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open the records");
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(from_json_line(line, path + ":" + std::to_string(n)));
    } catch (const Error&) {
      if (partial_last && f.eof()) {  // the last line, and no newline after it
        ++*partial_last;
        break;
      }
      throw;
    }
  }
  if (f.bad()) throw Error(path + ": cannot read the records");
  return out;
}

void append_records(const std::string& path, const std::vector<Record>& rs) {
  std::ofstream f(path, std::ios::app);
  for (const Record& r : rs) f << to_json_line(r) << "\n";
  f.flush();
  if (!f) throw Error(path + ": cannot write the records");
}

int drop_superseded_records(const std::string& path, size_t before) {
  const std::vector<Record> all = read_records(path);
  if (before >= all.size()) return 0;
  // A workload tuned again supersedes all its older records: plain, kept and the end-to-end
  // check's marks (which tune appends after this, for the records that stay).
  auto key = [](const Record& r) {
    std::string v;
    for (const auto& [k, x] : r.validators) v += k + "=" + x + ";";
    return r.workload + "|" + r.target_key + "|" + v;
  };
  std::set<std::string> retuned;
  for (size_t i = before; i < all.size(); ++i) retuned.insert(key(all[i]));
  std::vector<const Record*> keep;
  for (size_t i = 0; i < all.size(); ++i)
    if (i >= before || !retuned.count(key(all[i]))) keep.push_back(&all[i]);
  const int dropped = static_cast<int>(all.size() - keep.size());
  if (dropped == 0) return 0;
  std::vector<Record> kept;
  for (const Record* r : keep) kept.push_back(*r);
  write_records(path, kept);
  return dropped;
}

void write_records(const std::string& path, const std::vector<Record>& rs) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    for (const Record& r : rs) f << to_json_line(r) << "\n";
    f.flush();
    if (!f) throw Error(tmp + ": cannot write the records");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(path + ": cannot replace the records (" + ec.message() + ")");
}

std::vector<Record> merge_records(const std::vector<Record>& rs) {
  // Key: workload, target key, validators, implementation, kept layout, and the end-to-end
  // check's marks apart.
  auto key = [](const Record& r) {
    std::string v;
    for (const auto& [k, x] : r.validators) v += k + "=" + x + ";";
    return r.workload + "|" + r.target_key + "|" + v + "|" + r.implementation + "|" + r.kept_layout +
           (r.model_chain ? "|chain" : "") + (r.model_default ? "|default" : "");
  };
  std::map<std::string, Record> best_ok, a_failure;
  std::vector<std::string> order;
  for (const Record& r : rs) {
    const std::string k = key(r);
    if (!best_ok.count(k) && !a_failure.count(k)) order.push_back(k);
    if (r.outcome == Outcome::Ok) {
      auto it = best_ok.find(k);
      if (it == best_ok.end() || (r.confirmed && !it->second.confirmed) ||
          (r.confirmed == it->second.confirmed && r.median_ms < it->second.median_ms))
        best_ok[k] = r;
    } else if (!a_failure.count(k)) {
      a_failure[k] = r;
    }
  }
  std::vector<Record> out;
  for (const std::string& k : order) out.push_back(best_ok.count(k) ? best_ok[k] : a_failure[k]);
  return out;
}

SelectedRecords select_records(const std::vector<Record>& rs, const target::Target& t,
                          const std::map<std::string, std::string>& validators) {
  SelectedRecords a;
  const std::string tk = t.key();
  for (const Record& r : rs) {
    if (r.target_key != tk) {
      if (!a.other_target++) a.other_target_example = r.target_key;
      continue;
    }
    if (r.validators != validators) {
      if (!a.stale++) {
        for (const auto& [k, v] : validators) {
          auto it = r.validators.find(k);
          if (it == r.validators.end() || it->second != v) {
            a.stale_example = k + " '" + (it == r.validators.end() ? "" : it->second) + "' (this build: '" + v + "')";
            break;
          }
        }
        if (a.stale_example.empty()) a.stale_example = "validators they have and this build does not";
      }
      continue;
    }
    ++a.used;
    if (r.model_default) {
      a.defaults.insert(r.workload);
      continue;
    }
    if (!r.kept_layout.empty()) {
      if (r.outcome == Outcome::Ok) a.kept_by_workload[r.workload].push_back(r);
      continue;
    }
    a.by_workload[r.workload].push_back(r);
  }
  for (auto& [w, v] : a.kept_by_workload)
    std::stable_sort(v.begin(), v.end(), [](const Record& x, const Record& y) { return x.median_ms < y.median_ms; });
  // Ok records first, the confirmed ones first among them (timed side by side), fastest first;
  // then the failures in file order.
  for (auto& [w, v] : a.by_workload)
    std::stable_sort(v.begin(), v.end(), [](const Record& x, const Record& y) {
      const bool xo = x.outcome == Outcome::Ok, yo = y.outcome == Outcome::Ok;
      if (xo != yo) return xo;
      if (!xo) return false;
      if (x.confirmed != y.confirmed) return x.confirmed;
      return x.median_ms < y.median_ms;
    });
  return a;
}

std::string check_records(const SelectedRecords& a, const std::string& path, const target::Target& t) {
  std::string msg;
  if (a.other_target)
    msg += std::to_string(a.other_target) + " records for target '" + a.other_target_example +
           "' refused (this target is '" + t.key() + "')";
  if (a.stale)
    msg += std::string(msg.empty() ? "" : "; ") + std::to_string(a.stale) + " records with another " + a.stale_example +
           " refused (re-tune with this build)";
  if (!msg.empty()) msg = path + ": " + msg;
  if (a.used == 0 && (a.other_target || a.stale)) throw Error(msg + "; no record applies");
  return msg;
}

strategy::Chooser records_chooser(const SelectedRecords& records) {
  auto shared = std::make_shared<const SelectedRecords>(records);
  return [shared](const ir::FunctionNode& fn, const ir::CallNode&, const target::Target&) -> std::optional<strategy::Choice> {
    const SelectedRecords& a = *shared;
    const std::string key = workload_key(fn);
    if (a.defaults.count(key)) return std::nullopt;
    auto it = a.by_workload.find(key);
    if (it == a.by_workload.end() || it->second.front().outcome != Outcome::Ok) return std::nullopt;
    const Record& best = it->second.front();
    auto ms = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4g ms", v);
      return std::string(buf);
    };
    strategy::Choice c;
    c.implementation = best.implementation;
    c.knobs = best.knobs;
    c.from_record = true;
    c.why = "record: " + ms(best.median_ms);
    for (const Record& r : it->second) {
      if (std::any_of(c.measured.begin(), c.measured.end(), [&](const auto& p) { return p.first == r.implementation; }))
        continue;
      std::string what = r.outcome == Outcome::Ok    ? ms(r.median_ms)
                         : r.outcome == Outcome::Cut ? "cut short at " + ms(r.median_ms) + " (> 2x the best)"
                                                     : std::string(outcome_name(r.outcome)) + ": " + r.message;
      c.measured.emplace_back(r.implementation, what);
      // A candidate cut short passed the check: its time alone is at least that. No cost is
      // below the best's: a lower time of a record cut short or not timed beside the best is the
      // noise of another moment, and would make compile's choice with the neighbours' layouts
      // (kept_layouts.cpp) take it where nothing is kept. (The best is first: its own cost.)
      if (r.outcome == Outcome::Ok || r.outcome == Outcome::Cut)
        c.costs.push_back({r.implementation, r.knobs, std::max(r.median_ms, best.median_ms), 0});
    }
    if (auto k = a.kept_by_workload.find(it->first); k != a.kept_by_workload.end()) {
      std::vector<strategy::Choice::Cost> other_knobs;
      for (const Record& r : k->second) {
        bool matched = false;
        for (strategy::Choice::Cost& cost : c.costs)
          if (r.implementation == cost.implementation && r.knobs == cost.knobs) {
            if (cost.kept_ms == 0) cost.kept_ms = r.median_ms;
            cost.chain |= r.model_chain;
            matched = true;
          }
        if (matched) continue;
        // Timed kept with other knobs than its implementation's best alone (the best changed
        // when the candidates were timed again side by side): keeping takes those knobs, at
        // their own time alone. Without this option, the call kept its layouts with the best
        // alone's knobs, never timed kept (ResNet-50's 3x3 stride-2 512 conv: 0.84 ms alone,
        // 2.0 in the model).
        for (const Record& p : it->second)
          if (p.outcome == Outcome::Ok && p.implementation == r.implementation && p.knobs == r.knobs) {
            strategy::Choice::Cost cost{r.implementation, r.knobs, std::max(p.median_ms, best.median_ms), r.median_ms};
            cost.chain = r.model_chain;
            other_knobs.push_back(cost);
            break;
          }
      }
      c.costs.insert(c.costs.end(), other_knobs.begin(), other_knobs.end());
    }
    return c;
  };
}

}  // namespace sy::tune
