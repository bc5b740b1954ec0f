// Parser of the IR text form produced by print_module.
#pragma once
#include <string>

#include "ir/module.h"
#include "support/status.h"

namespace sy::ir {

// Errors carry "line:col: message".
Result<Module> parse_module(const std::string& text);

}  // namespace sy::ir
