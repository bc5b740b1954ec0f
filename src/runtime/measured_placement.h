// Measured placement (--placement measured): a region a backend claimed stays offloaded, whole or
// in part, only where the backend runs it faster, measured here on this machine, than the native
// kernels run the same nodes, and gives the reference executor's results.
//
// For each maximal region of the rules' placement:
//  1. The region is compiled alone by its backend and, with its composites flattened, by the
//     native path (with tuning records if the caller's native options carry them); both run on
//     seeded random inputs of the region's real types, alternately in turns of a few runs (each
//     turn's first untimed: as deployed, a run follows a run of the same model), and the medians
//     are compared. The backend's time includes its boundary work (reorders from plain layouts into
//     its own and back, copies in and out of its buffers). A backend whose outputs differ from
//     the reference executor's is disqualified.
//  2. Each other backend that takes part of the region is asked for it alone (the region
//     partitioned for that backend only; what it does not take runs natively), built, checked
//     and timed beside the first two: the region goes to whichever is fastest.
//  3. Each node of a region of several nodes is timed alone on the backend and natively. What a
//     value crossing between the two costs is fitted from the measurements (the nodes alone pay
//     a crossing for every value; the whole region pays them only at its boundary), and the
//     cheapest split of the region between backend and native is found by a minimum cut
//     (placement_search.h). A split that the model says beats both whole choices is built and
//     its parts timed; it is taken if they confirm it.
// With a records file, each region's measurements are stored under a key of its structure, the
// backend, the target and the thread count; a region found there is not measured again.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/module.h"
#include "native/compile.h"
#include "partition/partition_options.h"
#include "partition/pipeline.h"

namespace sy::runtime {

struct PlacementOptions {
  native::CompileOptions native;  // target, records (chooser), progress of the native builds
  int threads = 0;                // the thread count the model will run with (0: all cores)
  int warmup = 2, repeat = 15;    // untimed and timed runs of each candidate (time_alternately)
  double tolerance = 1e-3;        // max |got - reference| / max |reference| of a correct candidate
  bool split = true;              // search splits of regions (else: each region whole or native)
  bool others = true;             // also time the other backends on each region
  // Then time the whole model so placed beside each backend alone and native alone, and take a
  // single choice that is faster (placement_end_to_end.h). The CLI's compile does.
  bool end_to_end = false;
  // Another backend takes a region only when it is faster than the best of the rest by this
  // fraction: a smaller difference is noise, and would make placements differ from run to run.
  double others_margin = 0.02;
  // Placement records (tuning records of op "placement") read before measuring and appended to
  // after; "" for none.
  std::string records;
  std::function<void(const std::string&)> progress;
  // Tests: the cost of a candidate instead of timing it; nullopt times it. `what` is a region's
  // symbol in the rules' placement, or symbol + "/" + k for its k-th node alone, or symbol +
  // "/split" + j for the j-th part of its split; `candidate` is "native" or a backend's name.
  // The numeric checks still run.
  std::function<std::optional<double>(const std::string& what, const std::string& candidate)> cost;
};

struct RegionTiming {
  std::string symbol, backend;  // the region in the rules' placement
  double backend_ms = 0, native_ms = 0;
  double backend_error = 0, native_error = 0;  // relative to the reference executor
  int nodes = 0;
  // The search (regions of several nodes): the model's cost of the best split, and the split's
  // measured cost if it was built; how many nodes it keeps on the backend.
  double split_model_ms = 0, split_ms = 0;
  int split_backend_nodes = 0;
  // The nodes timed alone (sums) and the fitted cost of a value crossing, in ms per MB.
  bool searched = false;
  double alone_backend_ms = 0, alone_native_ms = 0, crossing_ms_per_mb = 0;
  // The other backends asked for the region (each on the region alone, with native kernels for
  // what it does not take): their times, or why one could not be timed.
  struct Other {
    std::string backend;
    double ms = 0;
    int offloaded = 0;  // nodes it takes (of the region's plain ops)
    std::string failure;
  };
  std::vector<Other> others;
  std::string other;  // with Decision::Other: the backend that took the region
  enum class Decision { Backend, Native, Split, Other } decision = Decision::Backend;
  bool from_records = false;
  std::string why;  // e.g. "measured: onednn 0.412 ms, native 0.530 ms"
  // The search's view of each node: timed alone on both sides (not when the backend does not
  // take it alone), and where the model's cheapest split puts it.
  struct NodeCost {
    std::string node;
    bool timed = false;
    double backend_ms = 0, native_ms = 0;
    bool on_backend = true;
  };
  std::vector<NodeCost> node_costs;
  std::vector<std::string> placed_as;  // the symbols of its nodes' regions in the placed module
};

// The end-to-end check: each candidate placement of the whole model ("measured", a backend's
// name for it alone, "native") and its median, or why it was not timed; the winner.
struct WholeModelTiming {
  struct Candidate {
    std::string name;
    double ms = 0;
    std::string failure;    // not timed, or disqualified
    // The earlier candidate ("measured", a backend's name, "native") whose placement this one
    // is, not timed again; "" when it is a placement of its own.
    std::string same_as;
  };
  std::vector<Candidate> candidates;
  std::string winner;  // "" when not checked
  bool from_records = false;
};
// "placement: end to end: measured 30.1 ms, onednn alone ..." ("" when not checked).
std::string end_to_end_line(const WholeModelTiming& w);

// The model partitioned with the placement decided by measurement. `popts` are the rules'
// options; `timings` gets one entry per region of the rules' placement. The report's regions and
// decisions are those of the placed module, with the measurements in RegionReport::measured and
// in the rejections of nodes taken back.
partition::PartitionResult place_by_measurement(const ir::Module& model, const partition::PartitionOptions& popts,
                                                const PlacementOptions& opts, std::vector<RegionTiming>* timings,
                                                WholeModelTiming* whole = nullptr);

// "placement: @onednn_0 onednn (measured: ...)": one line per region, for the CLI.
std::string placement_lines(const std::vector<RegionTiming>& timings);
// For --explain: per region searched, a table of its nodes' times alone and the model's split.
std::string placement_node_table(const std::vector<RegionTiming>& timings);

}  // namespace sy::runtime
