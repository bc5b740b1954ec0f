// libFuzzer target: bytes -> the ONNX importer (model parse, converters, type inference) -> verifier.
// A bad model must come back as an error (a Status or sy::Error); anything else escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontends/onnx/importer.h"
#include "ir/verifier.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  sy::onnx::ImportOptions opts;
  opts.max_model_bytes = size_t{16} << 20;
  try {
    // No model directory: external data is refused, never read from the fuzzer's disk.
    sy::Result<sy::ir::Module> m = sy::onnx::import_bytes(bytes, "", opts);
    if (m.is_ok()) (void)sy::ir::verify(m.value());
  } catch (const sy::Error&) {
  }
  return 0;
}
