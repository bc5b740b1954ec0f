// Undoing an offload: the calls of chosen external functions in @main are replaced by their
// bodies (composites flattened into plain op calls), so that the native path runs them instead.
#pragma once
#include <set>
#include <string>

#include "ir/module.h"

namespace sy::partition {

// m with every call of the module-level functions named in `symbols` inlined into @main and
// those functions removed. Used when a backend cannot build a region it claimed.
ir::Module inline_regions(const ir::Module& m, const std::set<std::string>& symbols);

// m with every call of the function `symbol` replaced by the @main of `by` (a module of the same
// signature: its parameters bound to the call's arguments) and by's other functions added (their
// names must be new to m). Measured placement puts another backend's partition of a region in
// the region's place.
ir::Module replace_region(const ir::Module& m, const std::string& symbol, const ir::Module& by);

}  // namespace sy::partition
