// Measured placement: each claimed region timed on its backend and natively, checked against the
// reference executor, and split where the measurements say a split is cheaper.
#include "runtime/measured_placement.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "partition/inline_regions.h"
#include "partition/partition_graph.h"
#include "runtime/compiled_model.h"
#include "runtime/placement_alternatives.h"
#include "runtime/placement_end_to_end.h"
#include "runtime/placement_records.h"
#include "runtime/placement_search.h"
#include "runtime/region_timing.h"
#include "support/error.h"
#include "target/host.h"

namespace sy::runtime {

namespace {

using Decision = RegionTiming::Decision;

std::string ms(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", v);
  return b;
}

const backends::Backend& backend_named(const std::vector<const backends::Backend*>& bs, const std::string& name) {
  for (const backends::Backend* b : bs)
    if (b->name() == name) return *b;
  throw Error("the model needs backend '" + name + "', which is not available in this build");
}

// The partition with every decision but `keep` native (keep's nodes claimed as the rules say).
partition::PartitionResult partition_keeping(const ir::Module& model, const partition::PartitionOptions& popts,
                                             size_t decisions, const std::set<int>& keep, const std::string& prefix) {
  partition::PartitionOptions o = popts;
  o.symbol_prefix = prefix;
  for (int k = 0; k < static_cast<int>(decisions); ++k)
    if (!keep.count(k)) o.native_nodes.insert(k);
  return partition::partition_module(model, o);
}

// The region of `r` that holds decision k, as an extern function; nullopt if k went native.
std::optional<backends::ExternFunction> region_of(const partition::PartitionResult& r, int k) {
  const int region = r.report.decisions[static_cast<size_t>(k)].region;
  if (region < 0) return std::nullopt;
  const std::string& symbol = r.report.regions[static_cast<size_t>(region)].symbol;
  return backends::ExternFunction{symbol, r.module.functions.at(symbol)};
}

// One region of the rules' placement and what placing it needs.
struct Region {
  size_t rules_index = 0;  // in the rules' report
  std::string symbol, backend;
  std::vector<int> nodes;  // its decisions, in graph order
  RegionTiming timing;
  std::vector<int> split_native;  // with Decision::Split: positions in `nodes` kept native
  std::optional<Alternative> other;  // with Decision::Other: the other backend's partition of it
};

class Placer {
 public:
  Placer(const ir::Module& model, const partition::PartitionOptions& popts, const PlacementOptions& opts)
      : model_(model), popts_(popts), opts_(opts),
        records_(opts.records, opts.native.target.value_or(target::host())) {}

  partition::PartitionResult run(std::vector<RegionTiming>* timings, WholeModelTiming* whole) {
    rules_ = partition::partition_module(model_, popts_);
    std::vector<Region> regions;
    for (size_t i = 0; i < rules_.report.regions.size(); ++i) {
      const partition::RegionReport& rr = rules_.report.regions[i];
      if (!rr.offloaded || rr.symbol.empty()) continue;
      Region g;
      g.rules_index = i;
      g.symbol = rr.symbol;
      g.backend = rr.backend;
      for (size_t k = 0; k < rules_.report.decisions.size(); ++k)
        if (rules_.report.decisions[k].region == static_cast<int>(i)) g.nodes.push_back(static_cast<int>(k));
      regions.push_back(std::move(g));
    }
    for (size_t i = 0; i < regions.size(); ++i) {
      Region& g = regions[i];
      if (opts_.progress)
        opts_.progress("placing: region " + std::to_string(i + 1) + "/" + std::to_string(regions.size()) + " (@" +
                       g.symbol + ", " + std::to_string(g.nodes.size()) + " nodes, on " + g.backend + " or native)");
      place(g);
    }
    std::set<int> native;
    for (const Region& g : regions) {
      if (g.timing.decision == Decision::Native) native.insert(g.nodes.begin(), g.nodes.end());
      if (g.timing.decision == Decision::Split)
        for (int p : g.split_native) native.insert(g.nodes[static_cast<size_t>(p)]);
    }
    partition::PartitionOptions o = popts_;
    o.native_nodes = native;
    partition::PartitionResult placed = partition::partition_module(model_, o);
    explain(regions, &placed);
    for (Region& g : regions)
      if (g.timing.decision == Decision::Other) replace_by_other(g, &placed);
    if (opts_.end_to_end && !popts_.backends.empty())
      placed = check_end_to_end(model_, popts_, opts_, std::move(placed), records_, whole);
    records_.save();
    if (timings) {
      timings->clear();
      for (Region& g : regions) timings->push_back(std::move(g.timing));
    }
    return placed;
  }

 private:
  void place(Region& g) {
    RegionTiming& t = g.timing;
    t.symbol = g.symbol;
    t.backend = g.backend;
    t.nodes = static_cast<int>(g.nodes.size());
    const backends::Backend& backend = backend_named(popts_.backends, g.backend);
    const backends::ExternFunction f{g.symbol, rules_.module.functions.at(g.symbol)};
    const bool search = opts_.split && g.nodes.size() >= 2;
    // The other backends asked are part of the key: records made without them do not decide.
    std::string asked = g.backend;
    if (opts_.others)
      for (const backends::Backend* b : popts_.backends)
        if (b->name() != g.backend) asked += " other=" + b->name();
    const std::string key = PlacementRecords::key(region_module(g.symbol, f.function), asked, opts_.threads, search);
    if (std::optional<StoredPlacement> s = records_.find(key)) {
      if (from_records(g, *s)) return;
    }
    std::unique_ptr<MeasuredRegion> whole = measure(backend, f, g.symbol, opts_, true);
    t.backend_error = whole->backend_error;
    t.native_error = whole->native_error;
    const std::string description = std::to_string(g.nodes.size()) + " nodes on " + g.backend;
    if (!whole->timed) {
      t.why = whole->why;
      if (!whole->backend_lost) {  // not measurable: the rules' decision stands
        t.why += "; kept on " + g.backend;
        return;
      }
      t.decision = Decision::Native;
      records_.add(key, description, g.backend, 0, tune::Outcome::Wrong, whole->why, whole->backend_error, {},
                   opts_.threads);
      // Native is timed only beside another backend: this one lost whatever native costs.
      if (opts_.others) {
        std::vector<Alternative> built = time_others(g, *whole, false, key, description);
        decide(g, false);
        keep_other(g, built);
      }
      records_.add(key, description, "native", t.native_ms, tune::Outcome::Ok, "", 0, {}, opts_.threads);
      if (t.decision == Decision::Other) t.why = whole->why + "; " + others_text(t);
      return;
    }
    t.backend_ms = whole->backend_ms;
    t.native_ms = whole->native_ms;
    if (search) search_split(g, backend, *whole, key, description);
    std::vector<Alternative> built;
    if (opts_.others) built = time_others(g, *whole, true, key, description);
    decide(g);
    keep_other(g, built);
    records_.add(key, description, g.backend, t.backend_ms, tune::Outcome::Ok, "", t.backend_error, {}, opts_.threads);
    records_.add(key, description, "native", t.native_ms, tune::Outcome::Ok, "", t.native_error, {}, opts_.threads);
    describe(g);
  }

  // The fastest of the candidates timed: the backend (when it ran), native, the split (when
  // built) and the other backends that ran it right.
  void decide(Region& g, bool backend_ran = true) {
    RegionTiming& t = g.timing;
    double best = t.native_ms;
    t.decision = Decision::Native;
    if (backend_ran && t.backend_ms < best) {
      best = t.backend_ms;
      t.decision = Decision::Backend;
    }
    if (backend_ran && t.split_ms > 0 && t.split_ms < best) {
      best = t.split_ms;
      t.decision = Decision::Split;
    }
    const double beaten = best * (1 - opts_.others_margin);
    double fastest = beaten;
    for (const RegionTiming::Other& o : t.others)
      if (o.failure.empty() && o.ms < fastest) {
        fastest = o.ms;
        t.decision = Decision::Other;
        t.other = o.backend;
      }
    if (t.decision == Decision::Split)
      t.split_backend_nodes = static_cast<int>(g.nodes.size() - g.split_native.size());
    else
      g.split_native.clear();
    if (t.decision != Decision::Other) {
      t.other.clear();
      g.other.reset();
    }
  }

  // Asks every other backend for the region alone, builds and checks what each takes, and times
  // them beside the region's backend (when it ran: `backend_ran`) and native, all alternately.
  // Returns those timed, their partitions only (decide() then chooses among them).
  std::vector<Alternative> time_others(Region& g, const MeasuredRegion& whole, bool backend_ran, const std::string& key,
                                       const std::string& description) {
    RegionTiming& t = g.timing;
    std::vector<Alternative> built;
    for (const backends::Backend* b : popts_.backends) {
      if (b->name() == g.backend) continue;
      std::optional<Alternative> a = partition_alternative(whole.plain, *b, popts_, other_prefix(g));
      if (!a) continue;  // it takes none of the region
      std::string why;
      if (opts_.progress) opts_.progress("placing: @" + g.symbol + " on " + b->name() + " instead");
      if (!build_alternative(&*a, popts_.backends, opts_, whole.inputs, whole.want, &why)) {
        t.others.push_back({b->name(), 0, a->offloaded, why});
        records_.add(key, description, "other:" + b->name(), 0, tune::Outcome::Wrong, why, a->error, {}, opts_.threads);
        continue;
      }
      built.push_back(std::move(*a));
    }
    if (built.empty()) {
      if (!backend_ran) t.why += "; no other backend takes it";
      return built;
    }
    auto cost = [&](const std::string& who) { return opts_.cost ? opts_.cost(g.symbol, who) : std::nullopt; };
    std::vector<std::function<void()>> runs;
    std::vector<std::optional<double>> injected;
    if (backend_ran) {
      runs.push_back([&] { whole.run_backend(); });
      injected.push_back(cost(g.backend));
    }
    runs.push_back([&] { whole.run_native(opts_.threads); });
    injected.push_back(cost("native"));
    for (const Alternative& a : built) {
      runs.push_back([&] { a.model.run(whole.inputs, opts_.threads); });
      injected.push_back(cost(a.backend));
    }
    std::vector<double> m;
    try {
      m = time_alternately(runs, injected, opts_);
    } catch (const std::exception& e) {
      for (const Alternative& a : built) t.others.push_back({a.backend, 0, a.offloaded, std::string("failed while timed (") + e.what() + ")"});
      return {};
    }
    size_t k = 0;
    if (backend_ran) t.backend_ms = m[k++];
    t.native_ms = m[k++];
    for (Alternative& a : built) {
      t.others.push_back({a.backend, m[k], a.offloaded, ""});
      records_.add(key, description, "other:" + a.backend, m[k], tune::Outcome::Ok, "", a.error, {}, opts_.threads);
      a.model = CompiledModel();  // only its partition is kept
      ++k;
    }
    return built;
  }

  // The partition of the other backend decide() chose, if it chose one.
  static void keep_other(Region& g, std::vector<Alternative>& built) {
    if (g.timing.decision != Decision::Other) return;
    for (Alternative& a : built)
      if (a.backend == g.timing.other) g.other = std::move(a);
  }

  // The names of an other backend's regions: new to the placed module.
  static std::string other_prefix(const Region& g) { return "placed_" + g.symbol + "_"; }

  // The placed module with g's region replaced by the other backend's partition of it, and the
  // report saying so: the region is listed as not offloaded (with the measurements), the other
  // backend's regions are added.
  void replace_by_other(Region& g, partition::PartitionResult* placed) {
    RegionTiming& t = g.timing;
    auto& ds = placed->report.decisions;
    std::set<int> regions;
    for (int k : g.nodes) regions.insert(ds[static_cast<size_t>(k)].region);
    size_t members = 0;
    for (const partition::NodeDecision& d : ds) members += regions.size() == 1 && d.region == *regions.begin();
    if (regions.size() != 1 || *regions.begin() < 0 || members != g.nodes.size() || !g.other) {
      // The placed partition did not keep the region as it was measured: its backend keeps it.
      t.why += "; kept on " + g.backend + " (the placed partition regrouped its nodes)";
      t.decision = Decision::Backend;
      return;
    }
    partition::RegionReport& rr = placed->report.regions[static_cast<size_t>(*regions.begin())];
    const std::string symbol = rr.symbol;
    placed->module = partition::replace_region(placed->module, symbol, g.other->parts);
    rr.symbol.clear();
    rr.offloaded = false;
    rr.why_not = rr.measured = t.why;
    t.placed_as.clear();
    int first = -1;
    for (partition::RegionReport r : g.other->regions) {
      r.measured = t.why;
      t.placed_as.push_back(r.symbol);
      if (first < 0) first = static_cast<int>(placed->report.regions.size());
      placed->report.regions.push_back(std::move(r));
    }
    for (int k : g.nodes) {
      partition::NodeDecision& d = ds[static_cast<size_t>(k)];
      d.region = first;
      d.backend = t.other;
      // The other backend's partition of the region has nodes of its own: this one may be among
      // those it left to the native kernels.
      d.why = "measured placement: its region went to " + t.other + " (the part it takes; the rest natively): " + t.why;
    }
  }

  // Takes the stored decision; false if the records do not decide (a split they name no longer fits).
  bool from_records(Region& g, const StoredPlacement& s) {
    RegionTiming& t = g.timing;
    for (int p : s.split_native)
      if (p < 0 || p >= static_cast<int>(g.nodes.size())) return false;
    ++records_.found;
    t.from_records = true;
    t.native_ms = *s.native_ms;
    if (!s.backend_ms) {
      for (const auto& [name, ms] : s.others) t.others.push_back({name, ms, 0, ""});
      decide(g, false);
      if (t.decision == Decision::Other) {
        const ir::Module plain = region_module(g.symbol, rules_.module.functions.at(g.symbol));
        g.other = partition_alternative(plain, backend_named(popts_.backends, t.other), popts_, other_prefix(g));
        if (!g.other) return false;
        describe(g);
        t.why += " (from records)";
        return true;
      }
      t.decision = Decision::Native;
      t.why = s.backend_failure + " (from records)";
      return true;
    }
    t.backend_ms = *s.backend_ms;
    t.backend_error = s.backend_error;
    if (s.split_ms) {
      t.split_ms = *s.split_ms;
      g.split_native = s.split_native;
    }
    for (const auto& [name, ms] : s.others) t.others.push_back({name, ms, 0, ""});
    decide(g);
    if (t.decision == Decision::Other) {
      const ir::Module plain = region_module(g.symbol, rules_.module.functions.at(g.symbol));
      g.other = partition_alternative(plain, backend_named(popts_.backends, t.other), popts_, other_prefix(g));
      if (!g.other) return false;  // the backend no longer takes it: measure again
    }
    describe(g);
    t.why += " (from records)";
    return true;
  }

  // "mylib 1.234 ms, otherlib failed (...): mylib fastest" (the last part when one won).
  static std::string others_text(const RegionTiming& t) {
    std::string s;
    for (const RegionTiming::Other& o : t.others)
      s += (s.empty() ? "" : ", ") + o.backend + " " + (o.failure.empty() ? ms(o.ms) : "failed (" + o.failure + ")");
    if (t.decision == Decision::Other) s += ": " + t.other + " fastest";
    return s;
  }

  void describe(Region& g) {
    RegionTiming& t = g.timing;
    t.why = "measured: " + g.backend + " " + ms(t.backend_ms) + ", native " + ms(t.native_ms);
    if (t.split_model_ms > 0 || t.split_ms > 0) {
      t.why += ", split ";
      t.why += t.split_ms > 0 ? ms(t.split_ms) : "not built";
      if (t.split_model_ms > 0) t.why += " (model " + ms(t.split_model_ms) + ")";
    }
    if (!t.others.empty()) t.why += ", " + others_text(t);
    if (t.decision == Decision::Native) t.why += ": native not slower";
    if (t.decision == Decision::Split)
      t.why += ": " + std::to_string(t.split_backend_nodes) + " of " + std::to_string(t.nodes) + " nodes on " +
               g.backend;
    if (t.searched) {
      char b[160];
      std::snprintf(b, sizeof b, "; nodes alone: %s %.3f ms, native %.3f ms, a crossing %.3f ms/MB", g.backend.c_str(),
                    t.alone_backend_ms, t.alone_native_ms, t.crossing_ms_per_mb);
      t.why += b;
      if (t.split_model_ms == 0) t.why += ", no split cheaper";
    }
  }

  // Times each node alone, fits the cost of a value crossing, finds the cheapest split by a
  // minimum cut and, if it beats both whole choices in the model, builds the region split and
  // times it beside them (t's times are then the latest).
  void search_split(Region& g, const backends::Backend& backend, const MeasuredRegion& whole, const std::string& key,
                    const std::string& description) {
    RegionTiming& t = g.timing;
    const size_t n = g.nodes.size();
    const auto& ds = rules_.report.decisions;
    std::map<int, int> local;  // decision index -> position in the region
    for (size_t i = 0; i < n; ++i) local[g.nodes[i]] = static_cast<int>(i);
    // Nodes alone: colour the region so that no two neighbours share a colour, and partition once
    // per colour (neighbours would merge into one region).
    std::vector<int> colour(n, -1);
    int colours = 0;
    for (size_t i = 0; i < n; ++i) {
      std::set<int> taken;
      for (const partition::NodeInput& in : ds[static_cast<size_t>(g.nodes[i])].inputs)
        if (local.count(in.producer)) taken.insert(colour[static_cast<size_t>(local[in.producer])]);
      for (size_t j = 0; j < i; ++j)
        for (const partition::NodeInput& in : ds[static_cast<size_t>(g.nodes[j])].inputs)
          if (in.producer == g.nodes[i]) taken.insert(colour[j]);
      int c = 0;
      while (taken.count(c)) ++c;
      colour[i] = c;
      colours = std::max(colours, c + 1);
    }
    std::vector<double> alone_b(n, 0), alone_n(n, 0);
    std::vector<bool> timed(n, false);
    for (int c = 0; c < colours; ++c) {
      std::set<int> keep;
      for (size_t i = 0; i < n; ++i)
        if (colour[i] == c) keep.insert(g.nodes[i]);
      partition::PartitionResult r = partition_keeping(model_, popts_, ds.size(), keep, g.symbol + "_alone_");
      for (size_t i = 0; i < n; ++i) {
        if (colour[i] != c) continue;
        std::optional<backends::ExternFunction> f = region_of(r, g.nodes[i]);
        if (!f) continue;  // the backend does not take it alone: no preference of its own
        std::unique_ptr<MeasuredRegion> p = measure(backend, *f, g.symbol + "/" + std::to_string(i), opts_, false);
        if (!p->timed) continue;
        alone_b[i] = p->backend_ms;
        alone_n[i] = p->native_ms;
        timed[i] = true;
      }
    }
    // Crossings: each value a node reads from another node of the region, and each value that
    // enters or leaves the region (the outside is native code or another backend's plain tensors).
    struct Crossing {
      int from, to;
      int64_t bytes;
    };
    std::vector<Crossing> xs;
    int64_t internal_bytes = 0;
    std::vector<int64_t> touching(n, 0);
    std::set<int> leaves;  // positions whose value is read outside the region
    for (size_t k = 0; k < ds.size(); ++k) {
      const bool inside = local.count(static_cast<int>(k));
      for (const partition::NodeInput& in : ds[k].inputs) {
        auto p = local.find(in.producer);
        if (inside && p != local.end()) {
          xs.push_back({p->second, local[static_cast<int>(k)], in.bytes});
          internal_bytes += in.bytes;
        } else if (inside) {
          xs.push_back({local[static_cast<int>(k)], -1, in.bytes});
        } else if (p != local.end()) {
          leaves.insert(p->second);
        }
      }
    }
    for (int i : leaves) xs.push_back({i, -1, ds[static_cast<size_t>(g.nodes[static_cast<size_t>(i)])].output_bytes});
    for (size_t i = 0; i < n; ++i)
      if (ds[static_cast<size_t>(g.nodes[i])].model_output && !leaves.count(static_cast<int>(i)))
        xs.push_back({static_cast<int>(i), -1, ds[static_cast<size_t>(g.nodes[i])].output_bytes});
    for (const Crossing& x : xs) {
      touching[static_cast<size_t>(x.from)] += x.bytes;
      if (x.to >= 0) touching[static_cast<size_t>(x.to)] += x.bytes;
    }
    // The model is calibrated to the two whole measurements. Alone, a node pays a crossing for
    // every value it reads or writes; inside the whole region only the boundary's are paid, so
    // the difference is what the internal values would have cost to cross (each twice: out of
    // one node, into the next). What the nodes alone miss on either side (a warm cache alone, a
    // fusion the whole region allows) is spread over them in proportion.
    double sum_b = 0, sum_n = 0;
    for (size_t i = 0; i < n; ++i) {
      sum_b += alone_b[i];
      sum_n += alone_n[i];
    }
    t.searched = true;
    t.alone_backend_ms = sum_b;
    t.alone_native_ms = sum_n;
    if (sum_b <= 0 || sum_n <= 0) return;
    const double per_byte = internal_bytes > 0 ? std::max(0.0, (sum_b - t.backend_ms) / (2.0 * internal_bytes)) : 0;
    t.crossing_ms_per_mb = per_byte * 1e6;
    double boundary = 0;
    for (const Crossing& x : xs)
      if (x.to < 0) boundary += per_byte * static_cast<double>(x.bytes);
    double intrinsic_b = 0;
    for (size_t i = 0; i < n; ++i) intrinsic_b += alone_b[i] - per_byte * static_cast<double>(touching[i]);
    const double scale_b = intrinsic_b > 0 ? std::max(0.0, t.backend_ms - boundary) / intrinsic_b : 1;
    const double scale_n = t.native_ms / sum_n;
    PlacementGraph pg;
    for (size_t i = 0; i < n; ++i) {
      pg.on_backend.push_back(timed[i] ? (alone_b[i] - per_byte * static_cast<double>(touching[i])) * scale_b : 0);
      pg.native.push_back(timed[i] ? alone_n[i] * scale_n : 0);
    }
    for (const Crossing& x : xs) pg.edges.push_back({x.from, x.to, per_byte * static_cast<double>(x.bytes)});
    PlacementChoice best = cheapest_placement(pg);
    for (size_t i = 0; i < n; ++i)
      t.node_costs.push_back({ds[static_cast<size_t>(g.nodes[i])].node, timed[i], alone_b[i], alone_n[i],
                              static_cast<bool>(best.on_backend[i])});
    std::vector<int> split_native;
    for (size_t i = 0; i < n; ++i)
      if (!best.on_backend[i]) split_native.push_back(static_cast<int>(i));
    const bool mixed = !split_native.empty() && split_native.size() < n;
    if (!mixed || best.cost >= std::min(t.backend_ms, t.native_ms)) {
      records_.add(key, description, "split", 0, tune::Outcome::Cut,
                   mixed ? "the model's best split is not cheaper than the region whole" : "the model keeps it whole",
                   0, {}, opts_.threads);
      return;
    }
    t.split_model_ms = best.cost;
    std::string why;
    std::optional<double> ms = time_split(g, backend, whole, split_native, &why);
    if (!ms) {
      records_.add(key, description, "split", 0, tune::Outcome::Wrong, why, 0, split_native, opts_.threads);
      t.split_model_ms = 0;
      return;
    }
    records_.add(key, description, "split", *ms, tune::Outcome::Ok, "", 0, split_native, opts_.threads);
    t.split_ms = *ms;
    g.split_native = split_native;
  }

  // The region split (its nodes at `split_native` native, the rest on the backend) built alone,
  // checked against the reference and timed beside the whole region's two choices; nullopt, with
  // why, if it cannot be built as the model's graph or gives other values.
  std::optional<double> time_split(Region& g, const backends::Backend& backend, const MeasuredRegion& whole,
                                   const std::vector<int>& split_native, std::string* why) {
    const auto& ds = rules_.report.decisions;
    const size_t n = g.nodes.size();
    // The region alone partitions into the same nodes in the same order (checked: names, the
    // positions of what each reads, and the claim of each node the split keeps on the backend),
    // so positions carry over.
    partition::PartitionOptions o = popts_;
    o.native_nodes.insert(split_native.begin(), split_native.end());
    o.symbol_prefix = g.symbol + "_split_";
    partition::PartitionResult pr = partition::partition_module(whole.plain, o);
    if (pr.report.decisions.size() != n) {
      *why = "the region alone partitions into other nodes";
      return std::nullopt;
    }
    std::map<int, int> local;
    for (size_t i = 0; i < n; ++i) local[g.nodes[i]] = static_cast<int>(i);
    for (size_t i = 0; i < n; ++i) {
      const partition::NodeDecision& a = ds[static_cast<size_t>(g.nodes[i])];
      const partition::NodeDecision& b = pr.report.decisions[i];
      const bool kept_native = o.native_nodes.count(static_cast<int>(i));
      bool same = a.node == b.node && a.inputs.size() == b.inputs.size() && (kept_native || b.backend == g.backend);
      for (size_t j = 0; same && j < a.inputs.size(); ++j) {
        auto it = local.find(a.inputs[j].producer);
        same = (it == local.end() ? -1 : it->second) == b.inputs[j].producer;
      }
      if (!same) {
        *why = "the region alone partitions into other nodes";
        return std::nullopt;
      }
    }
    try {
      CompiledModel cm = build_runnable(pr.module, popts_.backends, opts_.native);
      const double err = relative_error(cm.run(whole.inputs, opts_.threads), whole.want);
      if (err > opts_.tolerance) {
        char b[96];
        std::snprintf(b, sizeof b, "the split's results differ from the reference (relative error %.3g)", err);
        *why = b;
        return std::nullopt;
      }
      RegionTiming& t = g.timing;
      auto cost = [&](const std::string& who) { return opts_.cost ? opts_.cost(g.symbol, who) : std::nullopt; };
      std::vector<double> m = time_alternately({[&] { whole.run_backend(); }, [&] { whole.run_native(opts_.threads); },
                                                [&] { cm.run(whole.inputs, opts_.threads); }},
                                               {cost(backend.name()), cost("native"), cost("split")}, opts_);
      t.backend_ms = m[0];
      t.native_ms = m[1];
      return m[2];
    } catch (const std::exception& e) {
      *why = std::string("the split failed (") + e.what() + ")";
      return std::nullopt;
    }
  }

  // The placed report: each region's measurement on the regions its nodes went to, and on the
  // decisions of the nodes taken back.
  void explain(std::vector<Region>& regions, partition::PartitionResult* placed) {
    auto& ds = placed->report.decisions;
    for (Region& g : regions) {
      if (g.timing.decision == Decision::Other) continue;  // replace_by_other reports it
      if (g.timing.decision == Decision::Native) {
        // Listed as a region not offloaded, as one its backend declined is.
        partition::RegionReport rr = rules_.report.regions[g.rules_index];
        rr.symbol.clear();
        rr.offloaded = false;
        rr.why_not = rr.measured = g.timing.why;
        placed->report.regions.push_back(std::move(rr));
      }
      std::set<int> taken_back(g.split_native.begin(), g.split_native.end());
      std::set<std::string> symbols;
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        partition::NodeDecision& d = ds[static_cast<size_t>(g.nodes[i])];
        if (d.region >= 0) {
          partition::RegionReport& rr = placed->report.regions[static_cast<size_t>(d.region)];
          rr.measured = g.timing.why;
          if (symbols.insert(rr.symbol).second) g.timing.placed_as.push_back(rr.symbol);
          continue;
        }
        for (auto& [b, why] : d.rejections)
          if (why == "measured placement keeps it native")
            why = g.timing.decision == Decision::Split ? "split off its region: " + g.timing.why
                                                       : "region not offloaded: " + g.timing.why;
      }
    }
  }

  const ir::Module& model_;
  const partition::PartitionOptions& popts_;
  const PlacementOptions& opts_;
  PlacementRecords records_;
  partition::PartitionResult rules_;
};

}  // namespace

partition::PartitionResult place_by_measurement(const ir::Module& model, const partition::PartitionOptions& popts,
                                                const PlacementOptions& opts, std::vector<RegionTiming>* timings,
                                                WholeModelTiming* whole) {
  // "All cores" by its number: what the records are keyed by and the timings run with, so that a
  // placement made for `run --threads 2` serves `compile` (all cores) on a 2-core machine.
  PlacementOptions resolved = opts;
  if (resolved.threads <= 0) resolved.threads = std::max(1, omp_get_num_procs());
  return Placer(model, popts, resolved).run(timings, whole);
}

std::string placement_lines(const std::vector<RegionTiming>& timings) {
  std::string lines;
  for (const RegionTiming& t : timings) {
    std::string where = t.decision == Decision::Native ? "native" : t.backend;
    if (t.decision == Decision::Split) where = "split";
    if (t.decision == Decision::Other) where = t.other;
    std::string as;
    for (const std::string& s : t.placed_as) as += (as.empty() ? " as @" : ", @") + s;
    lines += "placement: @" + t.symbol + " (" + std::to_string(t.nodes) + " nodes) " + where + as + " (" + t.why + ")\n";
  }
  return lines;
}

std::string placement_node_table(const std::vector<RegionTiming>& timings) {
  std::string out;
  for (const RegionTiming& t : timings) {
    if (t.node_costs.empty()) continue;
    out += "measured placement of @" + t.symbol + "'s nodes, each alone (" + t.backend + " / native) and in the "
           "model's cheapest split:\n";
    for (const RegionTiming::NodeCost& c : t.node_costs) {
      char b[200];
      if (c.timed)
        std::snprintf(b, sizeof b, "  %-36s %9.3f / %9.3f ms  %s\n", c.node.c_str(), c.backend_ms, c.native_ms,
                      c.on_backend ? t.backend.c_str() : "native");
      else
        std::snprintf(b, sizeof b, "  %-36s %24s  %s\n", c.node.c_str(), "(not taken alone)",
                      c.on_backend ? t.backend.c_str() : "native");
      out += b;
    }
  }
  return out;
}

}  // namespace sy::runtime
