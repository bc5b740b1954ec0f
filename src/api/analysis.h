// Static facts about a model: inputs/outputs, op histogram, parameter count and FLOPs.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/module.h"

namespace sy::api {

struct TensorInfo {
  std::string name;
  Shape shape;
  DType dtype = DType::f32;
};

// FLOPs of one op call (the counting rules are documented at op_flops).
struct NodeFlops {
  std::string op;  // IR name, e.g. "nn.conv2d"
  Shape output_shape;
  int64_t flops = 0;
};

struct ModelStats {
  std::vector<TensorInfo> inputs;   // @main's parameters
  std::vector<TensorInfo> outputs;  // @main's results (a tuple is flattened), named after
                                    // Module.output_names (else "output0", "output1", ...)
  std::map<std::string, int64_t> op_histogram;  // op name -> number of calls
  int64_t num_ops = 0;
  int64_t params = 0;         // see count_params
  int64_t param_bytes = 0;
  int64_t flops = 0;          // sum over nodes
  std::vector<NodeFlops> nodes;  // every op call, in execution order
};

// Number of parameters: elements of the floating-point constants of the graph (each constant
// node counted once), excluding rank-0 constants (scalars such as an attention scale are
// literals, not weights) and the running mean and variance inputs of nn.batch_norm (statistics,
// not trained weights; torchvision's parameter counts exclude them too, so ResNet-50 has
// 25,557,032 either way).
//
// FLOPs (a multiply-add counts 2; "elements" are output elements unless stated):
//   nn.conv2d            2 * N * Cout * Hout * Wout * (Cin / groups) * Kh * Kw (bias not counted)
//   nn.conv2d_transpose  2 * N * Cin * Hin * Win * (Cout / groups) * Kh * Kw
//   matmul, nn.dense     2 * (output elements) * K, i.e. 2*M*N*K per batch (bias not counted)
//   nn.batch_norm        2 per element (a scale and a shift once folded)
//   nn.layer_norm, nn.instance_norm  5 per element; nn.softmax, nn.log_softmax 3 per element;
//   nn.lrn               2 * size per element
//   pooling windows      (output elements) * Kh * Kw; global pools: input elements
//   reductions, argmax/argmin, topk, cumsum: input elements
//   elementwise and broadcasting ops (arithmetic, activations, comparisons, where, cast): 1 per
//   element; identity: 0
//   data movement (reshape, transpose, concat, split, slice, gather, pad, tile, ...): 0;
//   image.resize2d: 1 per element
// Calls of functions (e.g. partitioned regions) count their bodies once per call.
ModelStats analyze(const ir::Module& m);

// FLOPs of one op call under the rules above.
int64_t op_flops(const ir::CallNode& call);

// The output names as files/labels use them: Module.output_names when it has one per output,
// else "output0", "output1", ...
std::vector<std::string> output_names(const ir::Module& m);
// Types of @main's outputs, a tuple flattened.
std::vector<ir::Type> output_types(const ir::Module& m);

}  // namespace sy::api
