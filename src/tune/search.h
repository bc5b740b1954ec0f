// The search over one task's space: implementation choice x that implementation's knobs (the
// knobs a schedule defines may depend on other knobs' values; the space is read by lowering).
//
// Guided (the default): first each implementation at its default knobs (the hand-set defaults
// are good starting points), then coordinate descent: every single-knob change of the best
// configuration measured so far that has not been expanded, best first; random configurations
// when nothing is left to expand. Random: uniformly random configurations (for comparison).
#pragma once
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "strategy/strategy.h"
#include "target/target.h"
#include "tune/measure.h"
#include "tune/task.h"

namespace sy::tune {

enum class SearchKind { Guided, Random };

class Search {
 public:
  Search(const Task& task, const target::Target& t, SearchKind kind, uint32_t seed);
  // The next configuration not yet proposed (knobs in canonical form: every knob the schedule
  // defines, with its value); nullopt when the space is exhausted.
  std::optional<strategy::Choice> next();
  void report(const strategy::Choice& c, const Measurement& m);
  // Configurations in the whole space (an upper bound when knobs depend on each other).
  int64_t space_size() const { return space_size_; }
  // The task's implementations that lower here (the others are never proposed).
  const std::vector<std::string>& lowerable() const { return lowerable_; }

 private:
  // The configuration as lowering sees it (canonical knobs), nullopt if it does not lower.
  std::optional<strategy::Choice> canonical(const std::string& impl, const std::string& knobs,
                                            std::vector<te::Knobs::Knob>* space = nullptr) const;
  std::optional<strategy::Choice> random_unseen();
  bool fresh(const strategy::Choice& c);

  const Task& task_;
  target::Target target_;
  SearchKind kind_;
  std::mt19937_64 rng_;
  int64_t space_size_ = 0;
  std::vector<std::string> lowerable_;
  std::vector<strategy::Choice> queue_;  // proposals, next at the back
  std::set<std::string> seen_, expanded_;
  std::vector<std::pair<double, strategy::Choice>> measured_;  // ok results
};

}  // namespace sy::tune
