// What the partition pipeline is told (backends in priority order, per-op overrides) and what it
// reports back (every placement decision and its reasons, every region).
#pragma once
#include <map>
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
};

// Why one node went where it went.
struct NodeDecision {
  std::string node;     // op name, or "composite <name>"
  std::string backend;  // "" = native
  std::string why;      // the choosing reason (e.g. "mylib first in priority order")
  std::vector<std::pair<std::string, std::string>> rejections;  // (backend, reason)
  int region = -1;  // index in PartitionReport::regions of the offloaded region it went into
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
};

}  // namespace sy::partition
