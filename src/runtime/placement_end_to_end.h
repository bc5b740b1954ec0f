// The end-to-end check of a measured placement. Regions are measured one at a time, so a
// placement of several could lose, as a whole, to one backend taking the whole model (crossings
// between regions, caches): the model placed as measured is timed beside each backend alone (the
// rules' placement with that backend only) and the native kernels alone, alternately, and a
// single choice that is faster beyond the margin, and gives the reference's results, replaces it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "partition/pipeline.h"
#include "runtime/measured_placement.h"
#include "runtime/placement_records.h"

namespace sy::runtime {

// `measured` is the placement to check; returns it, or the single choice that replaced it.
partition::PartitionResult check_end_to_end(const ir::Module& model, const partition::PartitionOptions& popts,
                                            const PlacementOptions& opts, partition::PartitionResult measured,
                                            PlacementRecords& records, WholeModelTiming* out);

}  // namespace sy::runtime
