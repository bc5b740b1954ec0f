// --backends / --prefer parsing and the partition pipeline run for the CLI.
#include "backend_selection.h"

#include <chrono>
#include <cstdio>

#include "target/host.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <set>

#include "ir/printer.h"
#include "records_option.h"
#include "runtime/measured_placement.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string available() {
  std::string s;
  for (const std::string& n : backends::BackendRegistry::global().names()) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

}  // namespace

void add_backend_options(CLI::App& app, BackendArgs& args, bool with_dump) {
  app.add_option("--backends", args.backends,
                 "external backends in priority order, comma-separated (built in: " + available() + ")")
      ->type_name("LIST");
  app.add_option("--prefer", args.prefer, "OP=BACKEND: ask BACKEND first for calls of OP (IR op name, e.g. nn.conv2d)")
      ->type_name("OP=BACKEND");
  app.add_option("--placement", args.placement,
                 "rules: a backend takes every region it supports (the default); measured: each region stays on "
                 "its backend, or is split between it and the native kernels, or runs natively, as timed on this "
                 "machine (and only where it gives the reference's results); with --records FILE the "
                 "measurements are kept in FILE and not repeated")
      ->check(CLI::IsMember({"rules", "measured"}))
      ->type_name("rules|measured");
  if (with_dump) {
    std::string names;
    for (const std::string& p : partition::pass_names()) names += (names.empty() ? "" : ", ") + p;
    app.add_option("--dump-after", args.dump_after, "print the IR after this pass (" + names + ", or all)")
        ->type_name("PASS");
  }
}

partition::PartitionOptions partition_options(const BackendArgs& args) {
  partition::PartitionOptions opts;
  std::set<std::string> seen;
  // No --backends: nothing is offloaded (every node native).
  for (const std::string& name : args.backends.empty() ? std::vector<std::string>{} : split_list(args.backends)) {
    if (name.empty()) throw Error("--backends '" + args.backends + "' has an empty entry");
    if (!seen.insert(name).second) throw Error("--backends lists '" + name + "' twice");
    opts.backends.push_back(&backends::BackendRegistry::global().get(name));
  }
  for (const std::string& p : args.prefer) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      throw Error("--prefer '" + p + "': expected OP=BACKEND, e.g. nn.conv2d=" +
                  (opts.backends.empty() ? std::string("BACKEND") : opts.backends.back()->name()));
    std::string op = p.substr(0, eq), backend = p.substr(eq + 1);
    if (!ops::OpRegistry::global().find(op)) throw Error("--prefer '" + p + "': unknown op '" + op + "'");
    if (!seen.count(backend))
      throw Error("--prefer '" + p + "': backend '" + backend + "' is not in --backends '" + args.backends + "'");
    opts.prefer[op] = backend;
  }
  return opts;
}

partition::PartitionResult run_partition(const ir::Module& m, const BackendArgs& args) {
  partition::PartitionOptions opts = partition_options(args);
  if (args.placement == "measured" && opts.backends.empty())
    throw Error("--placement measured needs --backends (it decides which of their regions to keep)");
  if (!args.dump_after.empty() && args.dump_after != "all") {
    const auto& names = partition::pass_names();
    if (std::find(names.begin(), names.end(), args.dump_after) == names.end())
      throw Error("--dump-after '" + args.dump_after + "': no such pass (see --help)");
  }
  auto dump = [&](const std::string& pass, const ir::Module& x) {
    if (args.dump_after != "all" && args.dump_after != pass) return;
    ir::PrintOptions po;
    po.constant_data = false;
    std::cout << "// IR after " << pass << "\n" << ir::print_module(x, po) << "\n";
  };
  return partition::partition_module(m, opts, dump);
}

std::string apply_placement(partition::PartitionResult& r, const ir::Module& model, const BackendArgs& args,
                            const target::Target& target, const std::string& records, int threads,
                            const std::function<void(const std::string&)>& progress) {
  if (args.placement != "measured") return "";
  if (target.kind != target::Kind::Cpu) throw Error("--placement measured needs a cpu target");
  if (!target::cannot_run_here(target, "").empty())
    throw Error("--placement measured times the kernels on this machine: the target '" + target.str() +
                "' cannot run here");
  runtime::PlacementOptions po;
  po.native.target = target;
  std::unique_ptr<RecordsUse> chooser = use_records(records, po.native, true);
  po.records = records;
  po.threads = threads;
  po.progress = progress;
  std::vector<runtime::RegionTiming> timings;
  const auto t0 = std::chrono::steady_clock::now();
  r = runtime::place_by_measurement(model, partition_options(args), po, &timings);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string lines = runtime::placement_lines(timings);
  size_t stored = 0;
  for (const runtime::RegionTiming& t : timings) stored += t.from_records;
  char b[64];
  std::snprintf(b, sizeof b, "%.1f s", s);
  lines += "placement: " + std::to_string(timings.size()) + " regions placed in " + b;
  if (!records.empty())
    lines += ", " + std::to_string(stored) + " from the records in " + records + " (the others measured and added)";
  return lines + "\n";
}

std::vector<const backends::Backend*> all_backends() {
  std::vector<const backends::Backend*> out;
  for (const std::string& n : backends::BackendRegistry::global().names())
    out.push_back(backends::BackendRegistry::global().find(n));
  return out;
}

runtime::CompiledModel build_backend_modules(const ir::Module& partitioned, const BackendArgs& args,
                                             const target::Target& target) {
  // Backends generate code for the cpu target; with the reference executor, for the host.
  const target::Target& code = target.kind == target::Kind::Cpu ? target : target::host();
  runtime::CompiledModel cm = runtime::build_modules(partitioned, partition_options(args).backends, code);
  for (const std::string& w : cm.fallbacks) std::cerr << "switchyard: warning: " << w << "\n";
  return cm;
}

}  // namespace sy::cli
