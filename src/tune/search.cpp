// Guided and random search over implementations and knobs.
#include "tune/search.h"

#include <algorithm>

#include "native/lower_function.h"
#include "support/error.h"

namespace sy::tune {

namespace {
std::string config_key(const strategy::Choice& c) { return c.implementation + "|" + c.knobs; }
}  // namespace

Search::Search(const Task& task, const target::Target& t, SearchKind kind, uint32_t seed)
    : task_(task), target_(t), kind_(kind), rng_(seed) {
  for (const std::string& impl : task.implementations) {
    std::vector<te::Knobs::Knob> space;
    std::optional<strategy::Choice> d = canonical(impl, "", &space);
    if (!d) continue;
    lowerable_.push_back(impl);
    int64_t n = 1;
    for (const auto& k : space) n *= static_cast<int64_t>(k.candidates.size());
    space_size_ += n;
    if (kind_ == SearchKind::Guided || queue_.empty()) queue_.insert(queue_.begin(), *d);  // first impl at the back
  }
  // Random search too starts from the default (the first implementation's), so that the tuner
  // always knows how the untuned kernel compares.
}

std::optional<strategy::Choice> Search::canonical(const std::string& impl, const std::string& knobs,
                                                  std::vector<te::Knobs::Knob>* space) const {
  strategy::Choice c;
  c.implementation = impl;
  c.knobs = knobs;
  te::Knobs k;
  native::LowerFunctionOptions lo;
  lo.target = &target_;
  lo.knobs = &k;
  try {
    native::lower_function(*strategy::with_choice(*task_.planned->as<ir::FunctionNode>(), c)->as<ir::FunctionNode>(),
                           "probe", lo);
  } catch (const std::exception&) {  // sy::Error, or an internal check a combination trips
    return std::nullopt;
  }
  c.knobs = k.to_string();
  if (space) *space = k.space();
  return c;
}

bool Search::fresh(const strategy::Choice& c) { return seen_.insert(config_key(c)).second; }

std::optional<strategy::Choice> Search::random_unseen() {
  if (task_.implementations.empty()) return std::nullopt;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::string& impl = task_.implementations[rng_() % task_.implementations.size()];
    strategy::Choice draw;
    draw.implementation = impl;
    std::optional<std::string> knobs =
        native::random_knobs(*strategy::with_choice(*task_.planned->as<ir::FunctionNode>(), draw)->as<ir::FunctionNode>(),
                             target_, rng_);
    std::optional<strategy::Choice> c;
    if (knobs) c = canonical(impl, *knobs);
    if (c && fresh(*c)) return c;
  }
  return std::nullopt;
}

std::optional<strategy::Choice> Search::next() {
  while (!queue_.empty()) {
    strategy::Choice c = queue_.back();
    queue_.pop_back();
    if (fresh(c)) return c;
  }
  if (kind_ == SearchKind::Guided) {
    // Expand the best measured configuration not expanded yet: each single-knob change.
    std::sort(measured_.begin(), measured_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [ms, best] : measured_) {
      if (!expanded_.insert(config_key(best)).second) continue;
      std::vector<te::Knobs::Knob> space;
      if (!canonical(best.implementation, best.knobs, &space)) continue;
      std::vector<strategy::Choice> around;
      for (const auto& k : space)
        for (int64_t v : k.candidates) {
          // best's assignment up to k, with k set to v; the knobs defined after k may depend on
          // it, so they take their defaults in the new space.
          std::string knobs;
          for (const auto& [name, value] : te::Knobs::parse(best.knobs)) {
            knobs += (knobs.empty() ? "" : " ") + name + "=" + std::to_string(name == k.name ? v : value);
            if (name == k.name) break;
          }
          if (std::optional<strategy::Choice> c = canonical(best.implementation, knobs); c && !seen_.count(config_key(*c)))
            around.push_back(*c);
        }
      if (!around.empty()) {
        queue_.assign(around.rbegin(), around.rend());
        return next();
      }
    }
  }
  return random_unseen();
}

void Search::report(const strategy::Choice& c, const Measurement& m) {
  if (m.outcome == Outcome::Ok) measured_.emplace_back(m.median_ms, c);
}

}  // namespace sy::tune
