// Pass: merge neighbouring one-node regions of the same backend into maximal regions without
// creating cycles, then keep only the regions their backend finds worth offloading.
//
// Two regions are merged only when one feeds the other directly and no path leads from one to
// the other through a node outside both (merging would make the region depend on itself).
// A region with several values used outside returns a tuple. Dissolved regions are inlined back
// as native nodes, and the backend's reason is recorded.
#pragma once
#include "ir/module.h"
#include "partition/partition_options.h"

namespace sy::partition {

ir::Module merge_regions(const ir::Module& m, const PartitionOptions& opts, PartitionReport* report = nullptr);

}  // namespace sy::partition
