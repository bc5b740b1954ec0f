// `switchyard backends`: the BYOC backends built into this binary.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "backends/backend.h"
#include "cli_common.h"

namespace sy::cli {
namespace {

int run_backends(bool json) {
  const backends::BackendRegistry& reg = backends::BackendRegistry::global();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const std::string& n : reg.names())
      j.push_back({{"name", n}, {"description", reg.find(n)->description()},
                   {"composite_rules", reg.find(n)->composite_rules().size()}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (reg.names().empty()) std::cout << "no external backends are built into this binary\n";
  for (const std::string& n : reg.names())
    std::cout << n << "  " << reg.find(n)->description() << " (" << reg.find(n)->composite_rules().size()
              << " composite patterns)\n";
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

}  // namespace sy::cli
