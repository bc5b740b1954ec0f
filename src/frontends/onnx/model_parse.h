// Parsing a ModelProto without copying its weights: the raw_data of the main graph's initializers
// stays in the model's bytes (protobuf would copy each into a std::string of its own; for a big
// model that is hundreds of MB of page faults before the importer copies the data once more).
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "onnx/onnx.pb.h"

namespace sy::onnx {

struct ParsedModel {
  ::onnx::ModelProto model;
  // Per initializer of model.graph() (same index): its raw_data as a view of the parsed bytes
  // (the bytes must outlive its use), or nullopt when it is in the proto as usual.
  std::vector<std::optional<std::string_view>> raw_data;
};

// The same messages protobuf's own parse gives, and false exactly when it fails. Bytes whose
// framing the splitter does not follow (groups, truncation) are parsed by protobuf whole.
bool parse_model(std::string_view bytes, ParsedModel& out);

}  // namespace sy::onnx
