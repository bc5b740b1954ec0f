// `switchyard partition MODEL --backends ...`: what goes where, and why.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>

#include "backend_selection.h"
#include "cli_common.h"
#include "partition_summary.h"

namespace switchyard::cli {
namespace {

struct PartitionArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  BackendArgs backends;
  bool explain = false;
  bool json = false;
  std::string dot;
  std::string records;
  int threads = 0;
};

int run_partition_cmd(const PartitionArgs& a) {
  Model m = load(a.model, a.input_shapes);
  if (a.backends.placement != "measured" && (!a.records.empty() || a.threads != 0))
    throw Error("--records and --threads apply to --placement measured (it times the regions with them)");
  Progress progress;
  Partitioned p = run_partition(m, a.backends, a.records, a.threads, [&](const std::string& s) { progress.show(s); });
  progress.clear();
  const PartitionReport r = p.report();
  if (!a.dot.empty()) {
    std::ofstream f(a.dot);
    if (!f) throw Error(a.dot + ": cannot write the Graphviz file");
    f << p.dot(a.model + " (backends " + a.backends.backends + ")");
    if (!f) throw Error(a.dot + ": write failed");
  }
  if (a.json) {
    nlohmann::json j = partition_json(r);
    j["model"] = a.model;
    j["backends"] = a.backends.backends;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (!a.backends.dump_after.empty()) return 0;
  std::cout << "model: " << a.model << "  backends (priority order): " << a.backends.backends << "\n";
  std::cout << p.placement();
  if (a.explain) std::cout << p.placement_nodes();
  print_partition(std::cout, r, a.explain);
  if (a.explain) std::cout << p.kernel_choices();
  if (!a.dot.empty()) std::cout << "graph: " << a.dot << "  (render: dot -Tsvg " << a.dot << " -o graph.svg)\n";
  return 0;
}

}  // namespace

Command add_partition_command(CLI::App& root) {
  auto args = std::make_shared<PartitionArgs>();
  CLI::App* c = root.add_subcommand("partition", "Show which backend takes each part of a model, and why");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy or zoo:NAME")->required();
  c->add_option("--input-shape", args->input_shapes, "NAME=D1,D2,...: static shape of an input")->type_name("NAME=SHAPE");
  add_backend_options(*c, args->backends, /*with_dump=*/true);
  c->add_flag("--explain", args->explain,
              "list every node with its placement and each backend's reason, and for the native part the "
              "implementations that apply to each kernel (for the host target)");
  c->add_flag("--json", args->json,
              "print one JSON object: total_flops, flops_by_backend, regions, nodes (with reasons)");
  c->add_option("--dot", args->dot,
                "write a Graphviz graph, regions as clusters coloured by backend (with --placement measured, "
                "each labelled with its candidates' times)")->type_name("FILE");
  c->add_option("--records", args->records,
                "with --placement measured: the placement records (read, and added to), as compile's")->type_name("FILE");
  c->add_option("--threads", args->threads,
                "with --placement measured: the thread count the regions are timed with (default: all cores)");
  c->footer(
      "Policy: a node goes to the first backend in --backends that accepts it (as a composite pattern or\n"
      "a single op); --prefer OP=BACKEND asks that backend first for OP. A region is offloaded only if its\n"
      "backend finds it worth the copies (a lone elementwise op between native ops stays native).\n"
      "--placement measured then times each region on this machine (its backend, native, a split, each\n"
      "other backend) and the whole model against each backend alone, and keeps the fastest.\n"
      "Example: switchyard partition model.onnx --backends LIST --explain --dot g.dot");
  return {c, [args] { return run_partition_cmd(*args); }};
}

}  // namespace switchyard::cli
