// The zoo's registry: names, descriptions, default input shapes and which dimensions may change.
#include "zoo/zoo.h"

#include <functional>
#include <sstream>

#include "support/error.h"
#include "zoo/models.h"

namespace sy::zoo {
namespace {

struct Entry {
  const char* name;
  const char* description;
  Shape default_shape;  // of the single input "input"
  // Throws sy::Error if the model cannot take this input shape.
  std::function<void(const std::string& model, const Shape&)> check_shape;
  std::function<ir::Module(const Shape&, uint64_t)> build;
};

[[noreturn]] void bad_shape(const std::string& model, const Shape& s, const std::string& why) {
  throw Error("zoo:" + model + ": input 'input' cannot have shape " + shape_str(s) + ": " + why);
}

// NCHW images: any batch, 3 channels, at least 32x32 (the networks downsample by 32).
void check_image(const std::string& model, const Shape& s) {
  if (s.size() != 4) bad_shape(model, s, "expected 4 dimensions (N, 3, H, W)");
  if (s[1] != 3) bad_shape(model, s, "expected 3 channels");
  if (s[0] < 1 || s[2] < 32 || s[3] < 32) bad_shape(model, s, "expected N >= 1 and H, W >= 32");
}

void check_sequence(const std::string& model, const Shape& s) {
  if (s.size() != 3 || s[2] != 768) bad_shape(model, s, "expected (batch, seq, 768)");
  if (s[0] < 1 || s[1] < 1) bad_shape(model, s, "expected batch >= 1 and seq >= 1");
}

void check_vector(const std::string& model, const Shape& s) {
  if (s.size() != 2 || s[1] != 64 || s[0] < 1) bad_shape(model, s, "expected (batch, 64)");
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {"resnet18", "ResNet-18 (torchvision layout), 1x3x224x224 -> 1000 classes, 11.7M params, 3.6 GFLOP",
       {1, 3, 224, 224}, check_image, [](const Shape& s, uint64_t seed) { return build_resnet(18, s, seed); }},
      {"resnet50", "ResNet-50 v1.5 (torchvision layout), 1x3x224x224 -> 1000 classes, 25.6M params, 8.2 GFLOP",
       {1, 3, 224, 224}, check_image, [](const Shape& s, uint64_t seed) { return build_resnet(50, s, seed); }},
      {"mobilenet_v2", "MobileNetV2 (torchvision layout), 1x3x224x224 -> 1000 classes, 3.5M params, 0.6 GFLOP",
       {1, 3, 224, 224}, check_image, build_mobilenet_v2},
      {"bert_encoder",
       "BERT-style encoder: 4 post-LN layers, d_model 768, 12 heads, FFN 3072; input 1x128x768 embeddings",
       {1, 128, 768}, check_sequence, build_bert_encoder},
      {"mlp", "tiny MLP 64 -> 128 -> 10 with outputs 'logits' and 'probs' (for quick tests)", {1, 64},
       check_vector, build_mlp},
  };
  return kEntries;
}

}  // namespace

std::vector<ModelInfo> list_models() {
  std::vector<ModelInfo> out;
  for (const Entry& e : entries()) out.push_back({e.name, e.description});
  return out;
}

ir::Module build(const std::string& name, const ZooOptions& opts) {
  for (const Entry& e : entries()) {
    if (name != e.name) continue;
    Shape shape = e.default_shape;
    for (const auto& [input, s] : opts.input_shapes) {
      if (input != "input")
        throw Error("zoo:" + name + " has no input '" + input + "' (its only input is 'input')");
      shape = s;
    }
    e.check_shape(name, shape);
    return e.build(shape, opts.seed);
  }
  std::ostringstream os;
  os << "unknown zoo model '" << name << "' (available:";
  for (const Entry& e : entries()) os << " " << e.name;
  os << ")";
  throw Error(os.str());
}

Shape calibration_shape(const Shape& s) {
  // Fixed, so that the weights do not depend on the input size. With periodic padding, 112x112
  // gives the deepest layers 4x4 pixels: statistics close to those of a 224x224 image (logits of
  // ResNet-50 within about +-5) at a quarter of the cost; 64x64 leaves them too few (+-20).
  return {1, s[1], 112, 112};
}

ir::Module make_module(std::vector<ir::Expr> params, std::vector<ir::Expr> outputs, std::vector<std::string> names) {
  SY_CHECK(!outputs.empty() && outputs.size() == names.size());
  ir::Expr body = outputs.size() == 1 ? outputs[0] : ir::tuple(std::move(outputs));
  ir::Module m;
  m.functions["main"] = ir::function(std::move(params), std::move(body));
  m.output_names = std::move(names);
  return m;
}

}  // namespace sy::zoo
