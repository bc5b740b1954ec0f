// Another backend's take on a region, for measured placement.
#include "runtime/placement_alternatives.h"

#include <cstdio>

#include "partition/pipeline.h"
#include "runtime/region_timing.h"

namespace sy::runtime {

std::optional<Alternative> partition_alternative(const ir::Module& plain, const backends::Backend& b,
                                                 const partition::PartitionOptions& popts, const std::string& prefix) {
  partition::PartitionOptions o = partition::alone(popts, b);
  o.symbol_prefix = prefix;
  partition::PartitionResult r = partition::partition_module(plain, o);
  Alternative a;
  a.backend = b.name();
  for (const partition::NodeDecision& d : r.report.decisions) a.offloaded += d.region >= 0;
  if (a.offloaded == 0) return std::nullopt;
  for (partition::RegionReport& g : r.report.regions)
    if (g.offloaded) a.regions.push_back(std::move(g));
  a.parts = std::move(r.module);
  return a;
}

bool build_alternative(Alternative* a, const std::vector<const backends::Backend*>& backends,
                       const PlacementOptions& opts, const std::vector<Tensor>& inputs,
                       const std::vector<Tensor>& want, std::string* why) {
  try {
    CompiledModel cm;
    try {
      cm = build_runnable(a->parts, backends, opts.native);
    } catch (const std::exception& e) {
      *why = a->backend + " failed to build its part (" + e.what() + ")";
      return false;
    }
    a->error = relative_error(cm.run(inputs, opts.threads), want);
    if (a->error > opts.tolerance) {
      char b[64];
      std::snprintf(b, sizeof b, "%.3g", a->error);
      *why = a->backend + "'s results differ from the reference (relative error " + b + ")";
      return false;
    }
    a->model = std::move(cm);
  } catch (const std::exception& e) {
    *why = a->backend + " failed on it (" + e.what() + ")";
    return false;
  }
  return true;
}

}  // namespace sy::runtime
