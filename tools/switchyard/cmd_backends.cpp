// `switchyard backends`: the BYOC backends built into this binary.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli_common.h"

namespace switchyard::cli {
namespace {

int run_backends(bool json) {
  const std::vector<BackendInfo> backends = backend_infos();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const BackendInfo& b : backends)
      j.push_back({{"name", b.name}, {"description", b.description}, {"composite_rules", b.composite_patterns}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (backends.empty()) std::cout << "no external backends are built into this binary\n";
  for (const BackendInfo& b : backends)
    std::cout << b.name << "  " << b.description << " (" << b.composite_patterns << " composite patterns)\n";
  return 0;
}

}  // namespace

Command add_backends_command(CLI::App& root) {
  auto json = std::make_shared<bool>(false);
  CLI::App* c = root.add_subcommand("backends", "List the external (BYOC) backends built into this binary");
  c->add_flag("--json", *json, "print them as a JSON array");
  c->footer("Use them with partition/compile/run --backends NAME[,NAME...] (priority order).");
  return {c, [json] { return run_backends(*json); }};
}

}  // namespace switchyard::cli
