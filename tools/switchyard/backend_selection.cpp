// --backends / --prefer parsing and the partition pipeline run for the CLI.
#include "backend_selection.h"


#include "target/host.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <set>

#include "ir/printer.h"
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

api::CompileSpec compile_spec(const BackendArgs& args, const std::string& target, const std::string& records,
                              int threads) {
  api::CompileSpec spec;
  spec.target = target;
  spec.records = records;
  spec.threads = threads;
  spec.placement = args.placement;
  // No --backends: nothing is offloaded (every node native).
  if (!args.backends.empty()) {
    spec.backends = split_list(args.backends);
    for (const std::string& name : spec.backends)
      if (name.empty()) throw Error("--backends '" + args.backends + "' has an empty entry");
  }
  for (const std::string& p : args.prefer) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      throw Error("--prefer '" + p + "': expected OP=BACKEND, e.g. nn.conv2d=" +
                  (spec.backends.empty() ? std::string("BACKEND") : spec.backends.back()));
    spec.prefer[p.substr(0, eq)] = p.substr(eq + 1);
  }
  if (!args.dump_after.empty() && args.dump_after != "all") {
    const auto& names = partition::pass_names();
    if (std::find(names.begin(), names.end(), args.dump_after) == names.end())
      throw Error("--dump-after '" + args.dump_after + "': no such pass (see --help)");
  }
  if (!args.dump_after.empty()) {
    const std::string which = args.dump_after;
    spec.after_pass = [which](const std::string& pass, const ir::Module& x) {
      if (which != "all" && which != pass) return;
      ir::PrintOptions po;
      po.constant_data = false;
      std::cout << "// IR after " << pass << "\n" << ir::print_module(x, po) << "\n";
    };
  }
  return spec;
}

partition::PartitionResult run_partition(const ir::Module& m, const BackendArgs& args) {
  api::CompileSpec spec = compile_spec(args, "reference", "", 0);
  if (args.placement == "measured" && spec.backends.empty())
    throw Error("--placement measured needs --backends (it decides which of their regions to keep)");
  return partition::partition_module(m, api::partition_options(spec.backends, spec.prefer), spec.after_pass);
}

std::vector<const backends::Backend*> all_backends() { return backends::BackendRegistry::global().all(); }

}  // namespace sy::cli
