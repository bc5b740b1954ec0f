// Pass: turn matches of each backend's composite table into composite functions
// (fn ... attrs {Composite="mylib.conv2d_bias_relu"}), backends in priority order.
#pragma once
#include "ir/module.h"
#include "partition/partition_options.h"

namespace sy::partition {

ir::Module merge_composites(const ir::Module& m, const PartitionOptions& opts);

}  // namespace sy::partition
