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
  // strategy::extern_libraries() is "a, b" (sorted, unique).
  std::vector<std::string> out;
  const std::string s = sy::strategy::extern_libraries();
  for (size_t start = 0; start < s.size();) {
    size_t comma = s.find(", ", start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  return out;
}

}  // namespace switchyard
