// --backends / --prefer parsing and the partitioning for the CLI.
#include "backend_selection.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

namespace switchyard::cli {

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
  for (const std::string& n : available_backends()) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

// The options both a compile and a partition take, checked as the command line states them.
struct Selection {
  std::vector<std::string> backends;
  std::map<std::string, std::string> prefer;
  std::string dump_after;
  std::function<void(const std::string&, const std::string&)> on_ir;
};

Selection selection(const BackendArgs& args) {
  Selection s;
  // No --backends: nothing is offloaded (every node native).
  if (!args.backends.empty()) {
    s.backends = split_list(args.backends);
    for (const std::string& name : s.backends)
      if (name.empty()) throw Error("--backends '" + args.backends + "' has an empty entry");
  }
  for (const std::string& p : args.prefer) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      throw Error("--prefer '" + p + "': expected OP=BACKEND, e.g. nn.conv2d=" +
                  (s.backends.empty() ? std::string("BACKEND") : s.backends.back()));
    s.prefer[p.substr(0, eq)] = p.substr(eq + 1);
  }
  if (!args.dump_after.empty() && args.dump_after != "all") {
    const std::vector<std::string> names = partition_pass_names();
    if (std::find(names.begin(), names.end(), args.dump_after) == names.end())
      throw Error("--dump-after '" + args.dump_after + "': no such pass (see --help)");
  }
  if (!args.dump_after.empty()) {
    s.dump_after = args.dump_after;
    s.on_ir = [](const std::string& pass, const std::string& ir) {
      std::cout << "// IR after " << pass << "\n" << ir << "\n";
    };
  }
  return s;
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
    for (const std::string& p : partition_pass_names()) names += (names.empty() ? "" : ", ") + p;
    app.add_option("--dump-after", args.dump_after, "print the IR after this pass (" + names + ", or all)")
        ->type_name("PASS");
  }
}

CompileOptions compile_options(const BackendArgs& args, const std::string& target, const std::string& records,
                               int threads) {
  Selection s = selection(args);
  CompileOptions o;
  o.target = target;
  o.records = records;
  o.threads = threads;
  o.placement = args.placement;
  o.backends = std::move(s.backends);
  o.prefer = std::move(s.prefer);
  o.dump_after = std::move(s.dump_after);
  o.on_ir = std::move(s.on_ir);
  return o;
}

Partitioned run_partition(const Model& m, const BackendArgs& args, const std::string& records, int threads,
                          std::function<void(const std::string&)> progress) {
  Selection s = selection(args);
  if (args.placement == "measured" && s.backends.empty())
    throw Error("--placement measured needs --backends (it decides which of their regions to keep)");
  PartitionOptions o;
  o.backends = std::move(s.backends);
  o.prefer = std::move(s.prefer);
  o.dump_after = std::move(s.dump_after);
  o.on_ir = std::move(s.on_ir);
  o.placement = args.placement;
  o.records = records;
  o.threads = threads;
  o.progress = std::move(progress);
  return partition(m, o);
}

}  // namespace switchyard::cli
