// Placement records: measured placement's measurements stored in a tuning records file.
#include "runtime/placement_records.h"

#include <chrono>
#include <ctime>

#include "codegen/c/compiler.h"
#include "ir/printer.h"
#include "support/error.h"

namespace sy::runtime {

namespace {

constexpr const char* kOp = "placement";

std::string utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (int x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

std::vector<int> parse_ints(const std::string& s, const std::string& where) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    try {
      out.push_back(std::stoi(s.substr(i, j - i)));
    } catch (const std::exception&) {
      throw Error(where + ": a placement record's knobs '" + s + "' are not a list of node positions");
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

PlacementRecords::PlacementRecords(const std::string& path, const target::Target& t)
    : path_(path), target_(t), validators_(tune::current_validators()) {
  if (path.empty()) return;
  std::vector<tune::Record> mine;
  for (tune::Record& r : tune::read_records(path))
    if (r.op == kOp) mine.push_back(std::move(r));
  tune::SelectedRecords s = tune::select_records(mine, t, validators_);
  by_key_ = std::move(s.by_workload);
}

std::string PlacementRecords::key(const ir::Module& region, const std::string& backend, int threads, bool split) {
  ir::PrintOptions po;
  po.constant_data = false;
  return codegen::content_hash(std::string(kOp) + " " + backend + " threads=" + std::to_string(threads) +
                               (split ? " split" : " whole") + "\n" + ir::print_module(region, po))
      .substr(0, 16);
}

std::optional<StoredPlacement> PlacementRecords::find(const std::string& key) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  StoredPlacement p;
  bool backend_seen = false;
  // Best first (select_records' order): the first record of each candidate is its best.
  for (const tune::Record& r : it->second) {
    const bool ok = r.outcome == tune::Outcome::Ok;
    if (r.implementation == "native") {
      if (ok && !p.native_ms) p.native_ms = r.median_ms;
    } else if (r.implementation.rfind("other:", 0) == 0) {
      if (ok) p.others.emplace(r.implementation.substr(6), r.median_ms);  // the first (best) stays
    } else if (r.implementation == "split") {
      p.searched = true;
      if (ok && !p.split_ms) {
        p.split_ms = r.median_ms;
        p.split_native = parse_ints(r.knobs, path_);
      }
    } else if (!backend_seen) {
      backend_seen = true;
      if (ok) {
        p.backend_ms = r.median_ms;
        p.backend_error = r.max_error;
      } else {
        p.backend_failure = r.message;
      }
    }
  }
  // A region whose native side was not measured, or whose backend left no record, is measured again.
  if (!p.native_ms || !backend_seen) return std::nullopt;
  return p;
}

std::optional<PlacementRecords::EndToEnd> PlacementRecords::end_to_end(const std::string& key) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  EndToEnd e;
  for (const tune::Record& r : it->second) {  // best first: the first of each is its best
    if (r.outcome != tune::Outcome::Ok) continue;
    if (r.implementation.rfind("winner:", 0) == 0 && e.winner.empty()) e.winner = r.implementation.substr(7);
    if (r.implementation == "measured") e.ms.emplace("measured", r.median_ms);
    if (r.implementation.rfind("alone:", 0) == 0) e.ms.emplace(r.implementation.substr(6), r.median_ms);
  }
  if (e.winner.empty()) return std::nullopt;
  return e;
}

void PlacementRecords::add(const std::string& key, const std::string& description, const std::string& candidate,
                           double ms, tune::Outcome outcome, const std::string& message, double error,
                           const std::vector<int>& split_native, int threads) {
  tune::Record r;
  r.workload = key;
  r.op = kOp;
  r.description = description;
  r.target = target_.str();
  r.target_key = target_.key();
  r.implementation = candidate;
  r.knobs = join_ints(split_native);
  r.median_ms = ms;
  r.costs_ms = {ms};
  r.outcome = outcome;
  r.message = message;
  r.max_error = error;
  r.threads = threads;
  r.uses = 1;
  r.validators = validators_;
  r.time = utc_now();
  new_.push_back(std::move(r));
}

void PlacementRecords::save() {
  if (path_.empty() || new_.empty()) return;
  tune::append_records(path_, new_);
  added += new_.size();
  new_.clear();
}

}  // namespace sy::runtime
