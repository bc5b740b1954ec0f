// The table of ONNX op converters, keyed by op type and the opset version a form appeared in.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "frontends/onnx/node_context.h"

namespace sy::onnx {

// Converts one node; returns one value per node output (nullptr for an unused optional output
// the converter does not produce).
using ConverterFn = std::vector<ir::Expr> (*)(NodeContext&);

class ConverterTable {
 public:
  // Registers the converter for op_type from opset `since` on (until a later registration).
  void add(const std::string& op_type, int since, ConverterFn fn);
  // The converter for op_type in the given opset, or nullptr.
  ConverterFn find(const std::string& op_type, int64_t opset) const;

 private:
  std::map<std::string, std::map<int, ConverterFn>> table_;
};

// Built on first use from the family registration functions below.
const ConverterTable& converter_table();

// Conv with the node's attributes (auto_pad, strides, ...) on given data/weight/bias values; used
// by Conv and by the integer and quantized convolutions.
ir::Expr build_conv(NodeContext& c, const ir::Expr& x, const ir::Expr& w, const ir::Expr& bias);

// A conv/pool node's window, one entry per spatial axis: kernel, strides, dilations and the
// padding at the begin and end of each axis (auto_pad resolved for these input sizes).
struct SpatialWindow {
  std::vector<int64_t> kernel, strides, dilations, begin, end;
};
SpatialWindow resolve_spatial(NodeContext& c, const Shape& in_spatial, std::vector<int64_t> kernel);

// 3-D (N, C, D, H, W) convolution and max/average pooling as their 2-D ops over the depth taps
// (converters_nn3d.cpp).
ir::Expr build_conv3d(NodeContext& c, const ir::Expr& x, const ir::Expr& w, const ir::Expr& bias);
ir::Expr build_pool3d(NodeContext& c, const ir::Expr& x, ops::OpCode pool2d);
// A 3-D ConvTranspose (x N, C, D, H, W; w C, O / groups, KD, KH, KW) from its resolved window:
// strides, dilations, output_padding, begin and end paddings per spatial axis (depth first).
struct TransposedWindow {
  std::vector<int64_t> strides, dilations, output_padding, begin, end;
  int64_t groups = 1;
};
ir::Expr build_conv_transpose3d(NodeContext& c, const ir::Expr& x, const ir::Expr& w, const ir::Expr& bias,
                                const TransposedWindow& win);

void register_elementwise_converters(ConverterTable& t);
void register_nn_converters(ConverterTable& t);
void register_transform_converters(ConverterTable& t);
void register_reduce_converters(ConverterTable& t);
void register_loss_converters(ConverterTable& t);
void register_quantize_converters(ConverterTable& t);
void register_rnn_converters(ConverterTable& t);
void register_signal_converters(ConverterTable& t);
void register_einsum_converters(ConverterTable& t);

}  // namespace sy::onnx
