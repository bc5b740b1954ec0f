// Zoo models: they build, verify, have the published parameter counts and FLOPs, are
// deterministic, accept shape overrides, and produce finite outputs of order 1.
#include <gtest/gtest.h>

#include <cmath>

#include "api/analysis.h"
#include "api/inputs.h"
#include "backends/reference/executor.h"
#include "ir/structural_equal.h"
#include "ir/verifier.h"
#include "support/random_tensor.h"
#include "zoo/zoo.h"

using namespace sy;

namespace {

api::ModelStats stats_of(const std::string& name, const zoo::ZooOptions& opts = {}) {
  ir::Module m = zoo::build(name, opts);
  Status st = ir::verify(m);
  EXPECT_TRUE(st.is_ok()) << name << ": " << st.message();
  return api::analyze(m);
}

std::string error_of(const std::string& name, const zoo::ZooOptions& opts = {}) {
  try {
    zoo::build(name, opts);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Largest |value| of a run on random input, after checking every value is finite.
double run_max_abs(const ir::Module& m) {
  const auto& p = ir::tensor_of(m.main().params[0]);
  Tensor x = sy::random_tensor(p.shape, p.dtype, 1);
  auto r = reference::run_module(m, {x});
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r) return NAN;
  double max_abs = 0;
  for (const Tensor& t : r.value())
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = t.get_as_double(i);
      EXPECT_TRUE(std::isfinite(v)) << "element " << i;
      max_abs = std::max(max_abs, std::fabs(v));
    }
  return max_abs;
}

}  // namespace

TEST(Zoo, ListsEveryModel) {
  std::vector<std::string> names;
  for (const auto& m : zoo::list_models()) {
    names.push_back(m.name);
    EXPECT_FALSE(m.description.empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"resnet18", "resnet50", "mobilenet_v2", "bert_encoder", "mlp"}));
}

// The counts are torchvision's (its BN running statistics are buffers, not parameters).
TEST(Zoo, ResNet18MatchesTorchvision) {
  auto st = stats_of("resnet18");
  EXPECT_EQ(st.params, 11689512);
  EXPECT_EQ(st.op_histogram["nn.conv2d"], 20);
  EXPECT_NEAR(static_cast<double>(st.flops) / 1e9, 3.64, 0.05);
  ASSERT_EQ(st.inputs.size(), 1u);
  EXPECT_EQ(st.inputs[0].name, "input");
  EXPECT_EQ(st.inputs[0].shape, (Shape{1, 3, 224, 224}));
  ASSERT_EQ(st.outputs.size(), 1u);
  EXPECT_EQ(st.outputs[0].name, "output");
  EXPECT_EQ(st.outputs[0].shape, (Shape{1, 1000}));
}

TEST(Zoo, ResNet50MatchesTorchvision) {
  auto st = stats_of("resnet50");
  EXPECT_EQ(st.params, 25557032);
  EXPECT_EQ(st.op_histogram["nn.conv2d"], 53);
  EXPECT_EQ(st.op_histogram["nn.batch_norm"], 53);
  EXPECT_EQ(st.op_histogram["add"], 16);
  EXPECT_NEAR(static_cast<double>(st.flops) / 1e9, 8.2, 0.1);  // 4.1 G multiply-adds
}

TEST(Zoo, MobileNetV2MatchesTorchvision) {
  auto st = stats_of("mobilenet_v2");
  EXPECT_EQ(st.params, 3504872);
  EXPECT_EQ(st.op_histogram["nn.conv2d"], 52);
  EXPECT_EQ(st.op_histogram["add"], 10);
  EXPECT_NEAR(static_cast<double>(st.flops) / 1e9, 0.62, 0.06);  // 0.3 G multiply-adds
}

TEST(Zoo, BertEncoderHasFourLayers) {
  auto st = stats_of("bert_encoder");
  // Per layer: 4 attention projections, 2 FFN matrices, 2 LayerNorms.
  int64_t per_layer = 4 * (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 2 * 768;
  EXPECT_EQ(st.params, 4 * per_layer);
  EXPECT_EQ(st.op_histogram["nn.dense"], 24);
  EXPECT_EQ(st.op_histogram["matmul"], 8);
  EXPECT_EQ(st.op_histogram["nn.layer_norm"], 8);
  EXPECT_EQ(st.inputs[0].shape, (Shape{1, 128, 768}));
  EXPECT_EQ(st.outputs[0].shape, (Shape{1, 128, 768}));
  // Dense: 2*128*(4*768*768 + 2*768*3072) per layer = 1.81 GFLOP; attention matmuls 0.05 GFLOP.
  EXPECT_NEAR(static_cast<double>(st.flops) / 1e9, 4 * (1.812 + 0.050), 0.1);
}

TEST(Zoo, MlpHasTwoNamedOutputs) {
  auto st = stats_of("mlp");
  ASSERT_EQ(st.outputs.size(), 2u);
  EXPECT_EQ(st.outputs[0].name, "logits");
  EXPECT_EQ(st.outputs[1].name, "probs");
  EXPECT_EQ(st.params, 64 * 128 + 128 + 128 * 10 + 10);
}

TEST(Zoo, IsDeterministicAndSeeded) {
  ir::Module a = zoo::build("mobilenet_v2"), b = zoo::build("mobilenet_v2");
  EXPECT_TRUE(ir::structural_equal(a, b)) << ir::first_difference(a, b);
  zoo::ZooOptions other;
  other.seed = 7;
  EXPECT_TRUE(ir::structural_equal(zoo::build("mlp"), zoo::build("mlp")));
  EXPECT_FALSE(ir::structural_equal(zoo::build("mlp"), zoo::build("mlp", other)));
}

TEST(Zoo, AcceptsShapeOverrides) {
  zoo::ZooOptions o;
  o.input_shapes["input"] = {2, 3, 64, 96};
  auto st = stats_of("resnet18", o);
  EXPECT_EQ(st.outputs[0].shape, (Shape{2, 1000}));
  zoo::ZooOptions b;
  b.input_shapes["input"] = {1, 16, 768};
  EXPECT_EQ(stats_of("bert_encoder", b).outputs[0].shape, (Shape{1, 16, 768}));
}

TEST(Zoo, RejectsBadShapesAndNames) {
  zoo::ZooOptions o;
  o.input_shapes["input"] = {1, 4, 224, 224};
  EXPECT_EQ(error_of("resnet50", o), "zoo:resnet50: input 'input' cannot have shape (1, 4, 224, 224): expected 3 channels");
  zoo::ZooOptions n;
  n.input_shapes["pixels"] = {1, 3, 224, 224};
  EXPECT_NE(error_of("resnet50", n).find("has no input 'pixels'"), std::string::npos);
  std::string e = error_of("resnet9000");
  EXPECT_NE(e.find("unknown zoo model 'resnet9000'"), std::string::npos) << e;
  EXPECT_NE(e.find("resnet50"), std::string::npos) << e;
}

// BatchNorm statistics are set from the propagated estimates: the logits are of order 1,
// neither ~1e-9 nor exploding.
TEST(Zoo, ResNet18OutputIsFiniteAndOfOrderOne) {
  double m = run_max_abs(zoo::build("resnet18"));
  EXPECT_GT(m, 0.1);
  EXPECT_LT(m, 30.0);
}

TEST(Zoo, MobileNetV2AndBertOutputsAreOfOrderOne) {
  zoo::ZooOptions small;
  small.input_shapes["input"] = {1, 3, 96, 96};
  double m = run_max_abs(zoo::build("mobilenet_v2", small));
  EXPECT_GT(m, 0.1);
  EXPECT_LT(m, 30.0);
  zoo::ZooOptions short_seq;
  short_seq.input_shapes["input"] = {1, 16, 768};
  double b = run_max_abs(zoo::build("bert_encoder", short_seq));
  EXPECT_GT(b, 0.5);
  EXPECT_LT(b, 30.0);
}
