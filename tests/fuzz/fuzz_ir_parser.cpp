// libFuzzer target: text -> the IR parser (lexer, parser, type re-inference) -> verifier -> printer.
// A bad text must come back as an error Status; anything escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    sy::Result<sy::ir::Module> m = sy::ir::parse_module(text);
    if (m.is_ok() && sy::ir::verify(m.value()).is_ok()) (void)sy::ir::print_module(m.value());
  } catch (const sy::Error&) {
  }
  return 0;
}
