// ONNX importer: reads a .onnx file (opsets 7-18) into an ir::Module.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/module.h"
#include "support/status.h"

namespace sy::onnx {

struct ImportOptions {
  // Specialises symbolic (or overrides) input dimensions: input name -> full static shape.
  std::map<std::string, Shape> input_shapes;
  // The shapes of the data to be given for inputs (`run --input NAME=FILE.npy`): where
  // input_shapes names none, an input's symbolic dimensions take the data's; its fixed
  // dimensions and its rank must agree (else an error saying which axis).
  std::map<std::string, Shape> data_shapes;
  // Files larger than this are refused with a clear error (protobuf's own limit is 2 GiB).
  size_t max_model_bytes = size_t{2000} << 20;
  // Binds graph inputs to fixed values: they become Constant nodes instead of parameters (as
  // "freezing" does elsewhere), e.g. to make inputs that feed shape arguments static.
  std::map<std::string, Tensor> input_values;
};

// Parses and converts. Weights become Constant nodes; external data files are read relative
// to the model's directory. Every unsupported op is listed in one error message.
Result<ir::Module> import_file(const std::string& path, const ImportOptions& opts = {});
Result<ir::Module> import_bytes(const std::string& bytes, const std::string& model_dir,
                                const ImportOptions& opts = {});

}  // namespace sy::onnx
