// Reports on what the compiler did with a model: which backend takes which part and why
// (partition), what compiling built (compile_report), and where a run spends its time (profile).
// Data where a program would want data, text where the thing is text (IR, Graphviz, the
// explanations `switchyard partition/compile --explain` print).
//
//   switchyard::PartitionOptions po;
//   po.backends = {"onednn"};
//   switchyard::Partitioned p = switchyard::partition(model, po);
//   for (const switchyard::PartitionRegion& r : p.report().regions) ...
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/switchyard.h"

namespace switchyard {

// One region of a partitioning: nodes a backend claimed together.
struct PartitionRegion {
  std::string symbol;   // its function after partitioning ("" if it was left native)
  std::string backend;
  std::vector<std::string> ops;  // op names, composites expanded, in order
  int64_t flops = 0;
  bool offloaded = false;
  std::string why_not;   // left native: the backend's reason
  std::string measured;  // measured placement: both times (or why the backend lost)
};

// Where one node of the model went and why.
struct PartitionNode {
  std::string node;     // op name, or "composite NAME"
  std::string backend;  // "" = native
  std::string why;      // the choosing reason (e.g. "onednn first in priority order")
  std::vector<std::pair<std::string, std::string>> rejections;  // (backend, its reason)
};

struct PartitionReport {
  int64_t total_flops = 0;  // of the model before partitioning
  std::vector<PartitionRegion> regions;
  std::vector<PartitionNode> nodes;  // every op call and composite call, in graph order
};

struct PartitionOptions {
  std::vector<std::string> backends;          // in priority order
  std::map<std::string, std::string> prefer;  // IR op name -> backend asked first for it
  // "rules", or "measured": the regions placed by timing them on this machine, as compile's
  // measured placement does (CompileOptions::placement), with these records, thread count and
  // progress.
  std::string placement = "rules";
  std::string records;
  int threads = 0;
  std::function<void(const std::string&)> progress;
  // As CompileOptions: the IR after the pass(es) named ("all" for every one).
  std::string dump_after;
  std::function<void(const std::string& pass, const std::string& ir)> on_ir;
};

// The passes of the partitioning, in order (what dump_after names).
SWITCHYARD_API std::vector<std::string> partition_pass_names();

// A partitioned model (no code built): what partition() returns.
class SWITCHYARD_API Partitioned {
 public:
  PartitionReport report() const;
  // A Graphviz graph: each offloaded region a cluster coloured by its backend, native ops outside.
  std::string dot(const std::string& title) const;
  // For the native part, per kernel on this machine's target: the implementations that apply
  // (priority order), the one the strategy chooses without records, and why the others do not
  // apply (the text of `switchyard partition --explain`).
  std::string kernel_choices() const;
  // Measured placement: one line per region with the candidates' times and the end-to-end
  // check's line; and its search's per-node times ("" by the rules).
  std::string placement() const;
  std::string placement_nodes() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
  friend struct Access;
};

// Partitions `model` across backends by the rules (no code built), or by measurement (placement
// "measured": the candidates are built and timed, on this machine's target); Error for an unknown
// backend or op, a duplicate, or a preference for a backend not listed.
SWITCHYARD_API Partitioned partition(const Model& model, const PartitionOptions& opts);

// The native kernels of a compiled model.
struct NativeReport {
  int64_t kernel_launches = 0, distinct_kernels = 0;
  int64_t planned_bytes = 0, intermediate_bytes = 0;  // activation memory, and what it holds
  double lower_seconds = 0, compile_seconds = 0;       // lowering, and the C compiler
  std::vector<std::pair<std::string, std::string>> fallbacks;  // kernel on the reference kernels, why
  std::string records;  // with records: "records (F): 23 kernels chosen by records, ..." ("" without)
  // Per kernel: the implementations that applied, the one chosen and why, their measured costs
  // from records (the text of `switchyard compile --explain`).
  std::string kernel_choices;
  std::string generated_c;  // with CompileOptions::keep_generated_c
};

// What compile() did. A Compiled loaded from an artifact has only target and native.
struct CompileReport {
  std::string target;
  PartitionReport partition;
  std::string placement;        // measured placement: one line per region and its time ("" by the rules)
  std::string placement_nodes;  // measured placement: its search's per-node times
  std::vector<std::string> warnings;  // regions a backend could not build, now native
  bool has_native = false;      // cpu targets: `native` is set
  NativeReport native;
};
SWITCHYARD_API CompileReport compile_report(const Compiled& compiled);

// One call of the native plan: its mean time per run.
struct ProfileCall {
  std::string kernel;  // kernel name, or the external function's symbol
  bool external = false;
  double ms = 0;
};
// A kernel's calls together.
struct ProfileKernel {
  std::string kernel;  // "@symbol" for an external function
  std::string ops;     // the fused ops, anchor first ("nn.conv2d+add+clip")
  std::string shape;   // the anchor's argument and result shapes
  std::string kind;    // its class: "conv 1x1", "conv depthwise", "dense", "external", ...
  double seconds = 0;  // per run, all its launches
  int launches = 0;
  int64_t flops = 0;   // per run
};
struct Profile {
  int runs = 0;
  double total_seconds = 0;          // per run, over the calls
  std::vector<ProfileCall> calls;    // in plan order
  std::vector<ProfileKernel> kernels;  // slowest first
};
// Runs a natively compiled model `runs` times timing every kernel call (separate from latency:
// the clock reads add to it); on_run(i) before run i (1-based). Error if it has no native kernels.
SWITCHYARD_API Profile profile(const Compiled& compiled, const std::vector<Tensor>& inputs, int runs, int threads = 0,
                               const std::function<void(int)>& on_run = nullptr);
// The table `switchyard run --profile N` prints: the `top` slowest kernels (0: all), the rest
// summed, then time by kernel class. "" for a profile without runs.
SWITCHYARD_API std::string profile_table(const Profile& p, int top);

}  // namespace switchyard
