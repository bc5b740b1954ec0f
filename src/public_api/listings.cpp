// What is built in: backends, zoo models, extern libraries.
#include "access.h"
#include "backends/backend.h"
#include "strategy/externs.h"
#include "switchyard/switchyard.h"
#include "zoo/zoo.h"

namespace switchyard {

std::vector<std::string> available_backends() { return sy::backends::BackendRegistry::global().names(); }

std::vector<BackendInfo> backend_infos() {
  const sy::backends::BackendRegistry& reg = sy::backends::BackendRegistry::global();
  std::vector<BackendInfo> out;
  for (const std::string& n : reg.names())
    out.push_back({n, reg.find(n)->description(), static_cast<int64_t>(reg.find(n)->composite_rules().size())});
  return out;
}

std::vector<ZooModel> zoo_models() {
  std::vector<ZooModel> out;
  for (const auto& m : sy::zoo::list_models()) out.push_back({m.name, m.description});
  return out;
}

std::vector<std::string> extern_libraries() {
  return sy::strategy::extern_library_list();
}

}  // namespace switchyard
