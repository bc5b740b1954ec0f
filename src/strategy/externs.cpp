// The extern function tables.
#include "strategy/externs.h"

#include <cctype>
#include <map>
#include <set>

#include "support/error.h"
#include "topi/topi.h"

namespace sy::strategy {

namespace {
std::map<std::string, StatefulExtern>& stateful() {
  static auto* m = new std::map<std::string, StatefulExtern>;
  return *m;
}
}  // namespace

void register_stateful_extern(const std::string& name, StatefulExtern e) {
  SY_CHECK(e.init && e.run && e.destroy) << "stateful extern " << name << " needs init, run and destroy";
  // The name is a C identifier: generated code and the libraries' site tables carry it.
  bool ident = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) ident &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  SY_CHECK(ident) << "stateful extern name '" << name << "' is not a C identifier";
  SY_CHECK(!topi::extern_table().count(name) && stateful().emplace(name, std::move(e)).second)
      << "extern " << name << " registered twice";
}

const StatefulExtern* find_stateful_extern(const std::string& name) {
  auto it = stateful().find(name);
  return it == stateful().end() ? nullptr : &it->second;
}

std::vector<std::string> extern_library_list() {
  std::set<std::string> libs;
  for (const auto& [name, e] : stateful())
    if (!e.library.empty()) libs.insert(e.library);
  return {libs.begin(), libs.end()};
}

std::string extern_libraries() {
  std::string out;
  for (const std::string& l : extern_library_list()) out += (out.empty() ? "" : ", ") + l;
  return out;
}

codegen::ExternSymbols extern_symbols() {
  codegen::ExternSymbols out = topi::extern_table();
  for (const auto& [name, e] : stateful()) out[name] = reinterpret_cast<void*>(e.run);
  return out;
}

}  // namespace sy::strategy
