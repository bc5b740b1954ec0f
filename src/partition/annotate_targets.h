// Pass: decide, node by node, which backend takes it (see the policy in partition_options.h) and
// wrap each claimed node in a one-node region function: fn (...) attrs {Compiler="mylib"} {...}.
// Constant arguments move inside the region function (weights travel with the region, once).
#pragma once
#include "ir/module.h"
#include "partition/partition_options.h"

namespace sy::partition {

// Appends one NodeDecision per op call and composite call of @main to report (if given).
ir::Module annotate_targets(const ir::Module& m, const PartitionOptions& opts, PartitionReport* report = nullptr);

}  // namespace sy::partition
