// The model zoo: ResNet-18/50, MobileNetV2, a BERT-style encoder and a tiny MLP, built directly
// as IR with deterministic random weights (like TVM's relay.testing). Usable as "zoo:NAME".
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/module.h"

namespace sy::zoo {

struct ZooOptions {
  // Overrides of the input shape by input name (e.g. "input" -> {4, 3, 160, 160}); each model
  // says which dimensions may change (batch, image size, sequence length) and rejects the rest.
  std::map<std::string, Shape> input_shapes;
  uint64_t seed = 0;  // weights are a pure function of (model, shape, seed)
};

struct ModelInfo {
  std::string name;         // "resnet50"
  std::string description;  // one line
};

// Every zoo model, in display order.
std::vector<ModelInfo> list_models();

// Builds the model; throws sy::Error for an unknown name (listing the known ones) or a shape
// override the model cannot take.
ir::Module build(const std::string& name, const ZooOptions& opts = {});

}  // namespace sy::zoo
