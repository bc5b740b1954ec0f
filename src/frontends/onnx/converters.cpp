// ConverterTable and the list of converter families.
#include "frontends/onnx/converters.h"

#include "support/error.h"

namespace sy::onnx {

void ConverterTable::add(const std::string& op_type, int since, ConverterFn fn) {
  SY_CHECK(fn) << "null converter for " << op_type;
  SY_CHECK(!table_[op_type].count(since)) << "converter for " << op_type << " since " << since << " added twice";
  table_[op_type][since] = fn;
}

ConverterFn ConverterTable::find(const std::string& op_type, int64_t opset) const {
  auto it = table_.find(op_type);
  if (it == table_.end()) return nullptr;
  // The newest form whose since-version is <= opset.
  auto v = it->second.upper_bound(static_cast<int>(opset));
  if (v == it->second.begin()) return nullptr;
  return std::prev(v)->second;
}

const ConverterTable& converter_table() {
  static const ConverterTable table = [] {
    ConverterTable t;
    register_elementwise_converters(t);
    register_nn_converters(t);
    register_transform_converters(t);
    register_reduce_converters(t);
    register_loss_converters(t);
    register_quantize_converters(t);
    register_rnn_converters(t);
    register_signal_converters(t);
    register_einsum_converters(t);
    return t;
  }();
  return table;
}

}  // namespace sy::onnx
