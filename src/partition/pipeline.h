// The partition pipeline as a plain script of passes, with a hook to see the IR after any pass.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "partition/partition_options.h"

namespace sy::partition {

// The pass names, in order, as --dump-after accepts them.
const std::vector<std::string>& pass_names();

struct PartitionResult {
  ir::Module module;
  PartitionReport report;
};

// Runs fold_constants, merge_composites, annotate_targets, merge_regions, partition_graph.
// after_pass (if set) sees the module after each pass.
PartitionResult partition_module(const ir::Module& m, const PartitionOptions& opts,
                                 const std::function<void(const std::string&, const ir::Module&)>& after_pass = nullptr);

}  // namespace sy::partition
