// Measured placement's other candidates for a region: the region alone partitioned for another
// backend only (what that backend does not take runs natively), built and checked against the
// reference executor, to be timed beside the region's own backend and the native kernels.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/module.h"
#include "partition/partition_options.h"
#include "runtime/compiled_model.h"
#include "runtime/measured_placement.h"
#include "support/tensor.h"

namespace sy::runtime {

struct Alternative {
  std::string backend;
  ir::Module parts;  // the region's module partitioned for the backend: @main and the backend's regions
  std::vector<partition::RegionReport> regions;  // the backend's regions in it
  int offloaded = 0;  // nodes of the region the backend takes (the others run natively)
  CompiledModel model;  // once built: what is timed
  double error = 0;     // relative to the reference executor
};

// The region's plain module `plain` partitioned with `b` alone (its regions named prefix + b +
// "_" + n); nullopt when b takes none of it.
std::optional<Alternative> partition_alternative(const ir::Module& plain, const backends::Backend& b,
                                                 const partition::PartitionOptions& popts, const std::string& prefix);

// Builds it and checks it on `inputs` against `want`; false, with why, when it fails or differs.
bool build_alternative(Alternative* a, const std::vector<const backends::Backend*>& backends,
                       const PlacementOptions& opts, const std::vector<Tensor>& inputs,
                       const std::vector<Tensor>& want, std::string* why);

}  // namespace sy::runtime
