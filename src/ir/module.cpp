#include "ir/module.h"

#include "support/error.h"

namespace sy::ir {

const FunctionNode& Module::main() const {
  auto it = functions.find("main");
  SY_CHECK(it != functions.end()) << "module has no main function";
  auto* f = it->second->as<FunctionNode>();
  SY_CHECK(f) << "main is not a function";
  return *f;
}

Expr Module::global(const std::string& name) const {
  auto it = functions.find(name);
  SY_CHECK(it != functions.end()) << "no function @" << name;
  return global_var(name, it->second->type);
}

}  // namespace sy::ir
