// Graphviz picture of a partitioned module: each offloaded region is a cluster coloured by its
// backend, holding its ops and composites; native ops stand outside.
#pragma once
#include <string>

#include "ir/module.h"

namespace sy::cli {

std::string partition_dot(const ir::Module& partitioned, const std::string& title);

}  // namespace sy::cli
