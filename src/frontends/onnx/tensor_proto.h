// Conversion of ONNX TensorProtos (raw_data, typed fields, external data) into sy::Tensors.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/tensor.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace sy::onnx {

// The Switchyard dtype of an ONNX TensorProto.DataType, or nullopt if we do not support it.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
// "float16", "string", ... for messages (also for types we do not support).
std::string onnx_dtype_name(int32_t onnx_type);

// Converts a TensorProto. `what` names it in error messages ("initializer 'w'"). External data
// is read relative to model_dir; model_dir empty means external data is refused. `raw_data`, when
// given, is the proto's raw_data left in the model's bytes by parse_model (model_parse.h).
// Validates dims and data sizes before allocating, so corrupted protos give an error, not an OOM.
Tensor tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& model_dir, const std::string& what,
                         std::optional<std::string_view> raw_data = std::nullopt);

}  // namespace sy::onnx
