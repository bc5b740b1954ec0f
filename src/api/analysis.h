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
// FLOPs: the sum of ops::op_flops over the calls (the rules are documented there).
// Calls of functions (e.g. partitioned regions) count their bodies once per call.
ModelStats analyze(const ir::Module& m);


// The output names as files/labels use them: Module.output_names when it has one per output,
// else "output0", "output1", ...
std::vector<std::string> output_names(const ir::Module& m);
// Types of @main's outputs, a tuple flattened.
std::vector<ir::Type> output_types(const ir::Module& m);

}  // namespace sy::api
