// The text and JSON summaries of a partitioning: regions, FLOP shares, and (explain) every
// node's placement with the backends' reasons.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>

#include "partition/pipeline.h"

namespace sy::cli {

nlohmann::json partition_json(const ir::Module& original, const partition::PartitionResult& r);
void print_partition(std::ostream& os, const ir::Module& original, const partition::PartitionResult& r, bool explain);

}  // namespace sy::cli
