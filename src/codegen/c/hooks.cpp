#include "codegen/c/hooks.h"

#include <map>
#include <mutex>

#include "support/error.h"

namespace sy::codegen {

namespace {
std::mutex& hooks_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, CodegenHook>& hooks() {
  static std::map<std::string, CodegenHook> h;
  return h;
}
}  // namespace

void register_codegen_hook(const std::string& name, CodegenHook hook) {
  SY_CHECK(name != "c" && !name.empty()) << "codegen hook name '" << name << "'";
  std::lock_guard<std::mutex> lock(hooks_mutex());
  hooks()[name] = std::move(hook);
}

const CodegenHook* find_codegen_hook(const std::string& name) {
  std::lock_guard<std::mutex> lock(hooks_mutex());
  auto it = hooks().find(name);
  return it == hooks().end() ? nullptr : &it->second;
}

std::vector<std::string> codegen_names() {
  std::lock_guard<std::mutex> lock(hooks_mutex());
  std::vector<std::string> out{"c"};
  for (const auto& [n, h] : hooks()) out.push_back(n);
  return out;
}

}  // namespace sy::codegen
