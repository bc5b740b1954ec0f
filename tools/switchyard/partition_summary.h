// The text and JSON summaries of a partitioning: regions, FLOP shares, and (explain) every
// node's placement with the backends' reasons.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>

#include <switchyard/report.h>

namespace switchyard::cli {

nlohmann::json partition_json(const PartitionReport& r);
void print_partition(std::ostream& os, const PartitionReport& r, bool explain);

}  // namespace switchyard::cli
