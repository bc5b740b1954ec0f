// Measured placement (--placement measured): a region a backend claimed stays offloaded only if
// the backend runs it faster, measured here on this machine, than the native kernels run the same
// nodes, and gives the reference executor's results.
//
// Each region (an external function of the partitioned module) is compiled alone by its backend
// and, with its composites flattened, by the native path (with tuning records if the caller's
// native options carry them); both run on seeded random inputs of the region's real types,
// alternately, and the medians are compared. The backend's time includes its boundary work (the
// reorders from plain inputs into its layouts and back, the copies in and out of its buffers),
// so the transition cost of offloading is measured, not assumed. A backend whose outputs differ
// from the reference executor's is disqualified. The choice is per maximal region (no splits, no
// search over coverings yet); the partition report records both times for --explain.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/module.h"
#include "native/compile.h"
#include "partition/partition_options.h"

namespace sy::runtime {

struct PlacementOptions {
  native::CompileOptions native;  // target, records (chooser), progress of the native builds
  int threads = 0;                // the thread count the model will run with (0: all cores)
  int warmup = 2, repeat = 15;    // untimed and timed runs of each candidate
  double tolerance = 1e-3;        // max |got - reference| / max |reference| of a correct candidate
  std::function<void(const std::string&)> progress;
  // Tests: the cost of a candidate ("native" or the backend's name) of a region instead of timing
  // it; nullopt times it. The numeric check still runs.
  std::function<std::optional<double>(const std::string& symbol, const std::string& candidate)> cost;
};

struct RegionTiming {
  std::string symbol, backend;
  double backend_ms = 0, native_ms = 0;
  double backend_error = 0, native_error = 0;  // relative to the reference executor
  bool offloaded = false;
  std::string why;  // e.g. "measured: onednn 0.412 ms, native 0.530 ms"
};

// The partitioned module with every region that lost (or gave wrong results) inlined back into
// @main; `report`'s regions are updated (offloaded, why_not) and `timings` gets one entry per region.
ir::Module place_by_measurement(const ir::Module& partitioned, const std::vector<const backends::Backend*>& available,
                                const PlacementOptions& opts, partition::PartitionReport* report,
                                std::vector<RegionTiming>* timings);

}  // namespace sy::runtime
