// What the partition pipeline is told (backends in priority order, per-op overrides) and what it
// reports back (every placement decision and its reasons, every region).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace sy::partition {

// The placement policy, deterministic by construction:
//  1. A node goes to the first backend in `backends` (priority order, as the user listed them)
//     whose composite rule or support check accepts it.
//  2. `prefer` overrides the order per op (IR op name -> backend name): that backend is asked
//     first for calls of that op, and no other backend may fold that op into a composite.
//  3. A maximal region is offloaded only if its backend's worth_offloading accepts it;
//     otherwise its nodes stay native.
struct PartitionOptions {
  std::vector<const backends::Backend*> backends;
  std::map<std::string, std::string> prefer;
  // Measured placement's decisions: these nodes (indices into PartitionReport::decisions, which
  // are in graph order and so the same for the same module and options) stay native whoever
  // claims them, and outlined regions are named prefix + backend + "_" + n.
  std::set<int> native_nodes;
  std::string symbol_prefix;
};

// `o` with `b` its only backend: the rules' placement of that backend alone (its `prefer` entries
// kept, the others' dropped). Measured placement's single choices and per-region alternatives.
inline PartitionOptions alone(const PartitionOptions& o, const backends::Backend& b) {
  PartitionOptions a;
  a.backends = {&b};
  for (const auto& [op, name] : o.prefer)
    if (name == b.name()) a.prefer.emplace(op, name);
  return a;
}

// A value a node reads: the decision index of the node that makes it (-1: a model input, or a
// value no op call makes) and its size. Constants are not listed (they travel with the node).
struct NodeInput {
  int producer = -1;
  int64_t bytes = 0;
};

// Why one node went where it went.
struct NodeDecision {
  std::string node;     // op name, or "composite <name>"
  std::string backend;  // "" = native
  std::string why;      // the choosing reason (e.g. "mylib first in priority order")
  std::vector<std::pair<std::string, std::string>> rejections;  // (backend, reason)
  int region = -1;  // index in PartitionReport::regions of the offloaded region it went into
  // The node's place in the graph, for placement's costs of crossing between backends.
  std::vector<NodeInput> inputs;
  bool model_output = false;  // its value is (part of) the model's result
  int64_t output_bytes = 0;   // the size of its value (0 for a tuple)
};

struct RegionReport {
  std::string symbol;  // global function name after partitioning ("" if dissolved)
  std::string backend;
  std::vector<std::string> ops;  // op names, composites expanded, in order
  int64_t flops = 0;
  bool offloaded = false;
  std::string why_not;  // when dissolved: the backend's reason
  std::string measured;  // with --placement measured: both times (or why the backend lost)
};

struct PartitionReport {
  std::vector<NodeDecision> decisions;  // every op call and composite call of @main, in order
  std::vector<RegionReport> regions;
  // Between the passes only: each claimed node's one-node region function and its index in
  // `decisions` (annotate_targets to merge_regions), and each region function and its index in
  // `regions` (merge_regions to partition_graph, which renumbers the decisions' region).
  std::vector<std::pair<ir::Expr, int>> wrapped_nodes, region_functions;
};

}  // namespace sy::partition
