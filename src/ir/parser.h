// Parser of the IR text form produced by print_module.
//
// Besides the printer's canonical form it accepts, for hand-written (golden) texts: `//` line
// comments, calls nested inline (`add(nn.relu(%x), %y)`), omitted attributes (they keep the op's
// defaults), any %N numbering, and no #[version] header. Let-bound values and constants that
// are never used are errors, so a golden text cannot silently lose lines. Nested fn bodies see
// only their own parameters (functions are closed, see verifier.h).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "ir/module.h"
#include "support/status.h"

namespace sy::ir {

// Errors carry "line:col: message" (1-based; the column counts bytes). Op type errors found
// while re-inferring call types are reported at the call.
// `blob` holds the bytes that blob(OFFSET) constants refer to (see PrintOptions::blob).
Result<Module> parse_module(const std::string& text, std::optional<std::string_view> blob = std::nullopt);

}  // namespace sy::ir
