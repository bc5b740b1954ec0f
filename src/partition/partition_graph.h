// Pass: outline each region function of @main into a module-level external function
// (@mylib_0 with Compiler, global_symbol and Primitive attributes) called from @main.
#pragma once
#include "ir/module.h"
#include "partition/partition_options.h"

namespace sy::partition {

// Replaces the offloaded entries of report->regions by one per outlined function, with its symbol.
// Outlined functions are named symbol_prefix + backend + "_" + n.
ir::Module partition_graph(const ir::Module& m, PartitionReport* report = nullptr, const std::string& symbol_prefix = "");

// The external functions of a partitioned module, by backend, in symbol order.
std::map<std::string, std::vector<backends::ExternFunction>> extern_functions(const ir::Module& m);

}  // namespace sy::partition
