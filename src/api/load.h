// Loading a model from a spec: a .onnx file, a .sy text-IR file, or "zoo:NAME".
#pragma once
#include <map>
#include <string>

#include "ir/module.h"
#include "support/status.h"

namespace sy::api {

struct LoadOptions {
  // Input name -> full static shape. For ONNX: specialises symbolic dimensions; for the zoo:
  // changes batch/image size/sequence length; for .sy files: must equal the declared shape.
  std::map<std::string, Shape> input_shapes;
  // Input name -> the shape of the data to be given for it: for ONNX, fills the symbolic
  // dimensions of an input that input_shapes does not name (onnx::ImportOptions::data_shapes).
  std::map<std::string, Shape> data_shapes;
  uint64_t zoo_seed = 0;
};

// Throws sy::Error naming the spec (missing file, parse errors, unknown zoo model, ...). The
// module is verified (ir::verify) before it is returned.
ir::Module load_model(const std::string& spec, const LoadOptions& opts = {});
// The same for the bytes of an ONNX model (external data files are read relative to the
// working directory).
ir::Module load_onnx_bytes(const std::string& bytes, const LoadOptions& opts = {});
Result<ir::Module> try_load_model(const std::string& spec, const LoadOptions& opts = {});

// "NAME=1,3,224,224" -> (NAME, {1, 3, 224, 224}); throws sy::Error quoting the bad text.
std::pair<std::string, Shape> parse_input_shape(const std::string& text);

}  // namespace sy::api
