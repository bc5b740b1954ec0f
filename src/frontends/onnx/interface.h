// An ONNX model's graph inputs and outputs as the file declares them, before any shape is fixed:
// what `inspect` shows for a model with symbolic dimensions (which then cannot be imported).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace sy::onnx {

struct DeclaredTensor {
  std::string name;
  std::string dtype;  // "float32", ...; ONNX's name for a type Switchyard does not take
  // Each dimension as declared: "224", a symbol ("N"), "?" for an unnamed unknown one. nullopt:
  // the file declares no shape.
  std::optional<std::vector<std::string>> dims;
  bool is_static() const;
};

struct DeclaredInterface {
  std::vector<DeclaredTensor> inputs;  // graph inputs that are not initializers
  std::vector<DeclaredTensor> outputs;
};

Result<DeclaredInterface> declared_interface(const std::string& path);

}  // namespace sy::onnx
