// Compiling a loaded model: partition, placement, backend modules, native kernels.
#include "api/compile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "backends/backend.h"
#include "ops/op.h"
#include "runtime/measured_placement.h"
#include "support/error.h"
#include "target/host.h"

namespace sy::api {

partition::PartitionOptions partition_options(const std::vector<std::string>& backends,
                                              const std::map<std::string, std::string>& prefer) {
  partition::PartitionOptions opts;
  std::set<std::string> seen;
  for (const std::string& name : backends) {
    if (name.empty()) throw Error("--backends has an empty entry");
    if (!seen.insert(name).second) throw Error("--backends lists '" + name + "' twice");
    opts.backends.push_back(&backends::BackendRegistry::global().get(name));
  }
  for (const auto& [op, backend] : prefer) {
    const std::string p = op + "=" + backend;
    if (op.empty() || backend.empty())
      throw Error("--prefer '" + p + "': expected OP=BACKEND, e.g. nn.conv2d=" +
                  (opts.backends.empty() ? std::string("BACKEND") : opts.backends.back()->name()));
    if (!ops::OpRegistry::global().find(op)) throw Error("--prefer '" + p + "': unknown op '" + op + "'");
    if (!seen.count(backend)) throw Error("--prefer '" + p + "': backend '" + backend + "' is not in --backends");
    opts.prefer[op] = backend;
  }
  return opts;
}

std::unique_ptr<RecordsUse> use_records(const std::string& path, native::CompileOptions& o, bool placement) {
  if (path.empty()) return nullptr;
  auto r = std::make_unique<RecordsUse>();
  r->path = path;
  std::vector<tune::Record> rs;
  size_t placements = 0;
  for (tune::Record& x : tune::read_records(path)) {
    if (x.op == "placement") ++placements;  // measured placement's (runtime/placement_records.h)
    else rs.push_back(std::move(x));
  }
  // Measured placement makes the file, or adds to it, when it holds no tuning records yet.
  if (rs.empty() && (placement || placements)) return nullptr;
  if (rs.empty()) throw Error(path + ": no tuning records (missing or empty file; make one with `switchyard tune`)");
  const target::Target& t = o.target ? *o.target : target::host();
  r->applicable = tune::select_records(rs, t, tune::current_validators());
  r->refused = tune::check_records(r->applicable, path, t);
  o.chooser = tune::records_chooser(r->applicable);
  return r;
}

std::string records_summary(const native::Compiled& nc, const RecordsUse& r) {
  int by_record = 0, by_priority = 0, in_chains = 0, by_hooks = 0;
  for (const strategy::Choice& c : nc.choices) {
    if (c.implementation.empty()) continue;
    (c.by_hook ? by_hooks : c.from_record ? by_record : c.in_chain ? in_chains : by_priority)++;
  }
  std::string s = "records (" + r.path + "): " + std::to_string(by_record) + " kernels chosen by records, " +
                  (in_chains ? std::to_string(in_chains) + " in chains keeping a layout, " : "") +
                  std::to_string(by_priority) + " by priority (no record for their workload)" +
                  (by_hooks ? ", " + std::to_string(by_hooks) + " lowered by target hooks" : "");
  if (!r.applicable.defaults.empty())
    s += "; the records leave " + std::to_string(r.applicable.defaults.size()) +
         " workloads to the defaults (a model ran faster so end to end: tune's check)";
  // Timed while other processes took CPUs (tune --allow-busy, or its marks kept): their choices
  // may be the machine's noise, which a user reading only this line could not tell.
  int busy = 0;
  double busy_max = 0;
  for (const auto& [workload, records] : r.applicable.by_workload) {
    double most = 0;
    for (const tune::Record& x : records) most = std::max(most, x.others_cpus);
    busy += most > 0;
    busy_max = std::max(busy_max, most);
  }
  if (busy > 0) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", busy_max);
    s += "\nrecords (" + r.path + "): " + std::to_string(busy) + " of " + std::to_string(r.applicable.by_workload.size()) +
         " workloads were timed while other processes took CPUs (up to " + b +
         "): their choices may be noise; `switchyard tune` with the same file times them again";
  }
  if (!r.refused.empty()) s += "\n" + r.refused;
  return s;
}

std::string measured_placement(const ir::Module& m, const partition::PartitionOptions& popts,
                               const target::Target& target, const CompileSpec& spec, partition::PartitionResult* r,
                               std::string* node_table) {
  if (target.kind != target::Kind::Cpu) throw Error("--placement measured needs a cpu target");
  if (!target::cannot_run_here(target, "").empty())
    throw Error("--placement measured times the kernels on this machine: the target '" + target.str() +
                "' cannot run here");
  runtime::PlacementOptions po;
  po.native.target = target;
  po.native.lowering_hooks = runtime::lowering_hooks(popts.backends);
  po.native.region_splits = runtime::region_splits(popts.backends);
  std::unique_ptr<RecordsUse> chooser = use_records(spec.records, po.native, true);
  po.records = spec.records;
  po.threads = spec.threads;
  po.progress = spec.progress;
  po.end_to_end = true;
  std::vector<runtime::RegionTiming> timings;
  runtime::WholeModelTiming whole;
  const auto t0 = std::chrono::steady_clock::now();
  *r = runtime::place_by_measurement(m, popts, po, &timings, &whole);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string lines = runtime::placement_lines(timings) + runtime::end_to_end_line(whole);
  *node_table = runtime::placement_node_table(timings);
  size_t stored = 0;
  for (const runtime::RegionTiming& t : timings) stored += t.from_records;
  char b[64];
  std::snprintf(b, sizeof b, "%.1f s", s);
  lines += "placement: " + std::to_string(timings.size()) + " regions placed in " + b;
  if (!spec.records.empty())
    lines += ", " + std::to_string(stored) + " from the records in " + spec.records + " (the others measured and added)";
  return lines + "\n";
}

Compilation compile(const ir::Module& m, const CompileSpec& spec) {
  Compilation c;
  c.target = target::parse(spec.target);
  if (spec.placement != "rules" && spec.placement != "measured")
    throw Error("--placement '" + spec.placement + "': expected rules or measured");
  const bool cpu = c.target.kind == target::Kind::Cpu;
  if (!spec.records.empty() && !cpu) throw Error("--records needs a cpu target (native kernels)");
  partition::PartitionOptions popts = partition_options(spec.backends, spec.prefer);
  if (spec.placement == "measured" && popts.backends.empty())
    throw Error("--placement measured needs --backends (it decides which of their regions to keep)");
  if (!cpu && popts.backends.empty()) {
    // The reference executor alone: nothing to build.
    if (!popts.prefer.empty()) throw Error("--prefer needs --backends");
    c.partition.module = m;
    c.model.module = m;
    return c;
  }
  if (spec.progress) spec.progress("partitioning...");
  c.partition = partition::partition_module(m, popts, spec.after_pass);
  if (spec.placement == "measured") c.placement = measured_placement(m, popts, c.target, spec, &c.partition, &c.placement_nodes);
  if (spec.progress) spec.progress("building backend modules...");
  // Backends generate code for the cpu target; with the reference executor, for the host.
  c.model = runtime::build_modules(c.partition.module, popts.backends, cpu ? c.target : target::host());
  c.warnings = c.model.fallbacks;
  if (!cpu) return c;
  native::CompileOptions no;
  no.target = c.target;
  no.progress = spec.progress;
  no.lowering_hooks = runtime::lowering_hooks(popts.backends);
  no.region_splits = runtime::region_splits(popts.backends);
  std::unique_ptr<RecordsUse> records = use_records(spec.records, no, spec.placement == "measured");
  c.native = native::compile_native(c.model.module, no);
  c.model.module = c.native->fused;
  c.model.native = c.native->executable;
  if (records) c.records = records_summary(*c.native, *records);
  return c;
}

}  // namespace sy::api
