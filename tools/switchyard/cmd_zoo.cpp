// `switchyard zoo`: the built-in models usable as zoo:NAME.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli_common.h"

namespace switchyard::cli {
namespace {

int run_zoo(bool json) {
  auto models = zoo_models();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& m : models) j.push_back({{"name", "zoo:" + m.name}, {"description", m.description}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  size_t w = 0;
  for (const auto& m : models) w = std::max(w, m.name.size() + 4);
  std::cout << "Built-in models (random weights, deterministic); use them wherever a model path is accepted:\n";
  for (const auto& m : models)
    std::cout << "  zoo:" << m.name << std::string(w - m.name.size() - 4 + 2, ' ') << m.description << "\n";
  return 0;
}

}  // namespace

Command add_zoo_command(CLI::App& root) {
  auto json = std::make_shared<bool>(false);
  CLI::App* c = root.add_subcommand("zoo", "List the built-in models (zoo:NAME)");
  c->alias("list-models");
  c->add_flag("--json", *json, "print the list as JSON");
  return {c, [json] { return run_zoo(*json); }};
}

}  // namespace switchyard::cli
