// End to end on torchvision exports (tests/models writes them into the build tree): every op of
// @main rewritten by the composite table into ONE oneDNN region, compared with PyTorch's outputs.
#include <filesystem>

#include "target/host.h"
#include "test_util.h"

#include "api/load.h"
#include "ir/visitor.h"
#include "pattern/pattern.h"
#include "support/npy.h"

namespace sy::onednn_test {
namespace {

void run_model(const std::string& name) {
  const std::string dir = std::string(SY_BUILD_DIR) + "/tests/models/" + name;
  if (!std::filesystem::exists(dir + "/model.onnx"))
    GTEST_SKIP() << dir << " not exported (run the model.* export tests first)";
  ir::Module m = api::load_model(dir + "/model.onnx");
  ir::Expr body = m.main().body;
  for (const backends::CompositeRule& r : backend().composite_rules())
    body = pattern::rewrite_composites(body, r.pattern, r.name, r.check);
  for (const ir::Expr& e : ir::post_order(body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op()) {
      backends::Verdict v = backend().supports_op(*c);
      ASSERT_TRUE(v.ok) << v.reason;
    }
  ir::Expr fn = region(m.main().params, body);
  Tensor in = npy::read_file(dir + "/input.npy");
  omp_set_num_threads(2);
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  std::vector<Tensor> a = mod->run("onednn_0", {in});
  std::vector<Tensor> b = mod->run("onednn_0", {in});
  ASSERT_EQ(a.size(), m.output_names.size());
  for (size_t i = 0; i < a.size(); ++i) {
    Tensor want = npy::read_file(dir + "/reference/" + m.output_names[i] + ".npy");
    EXPECT_LT(rel_err(a[i], want), 1e-4) << name << " output " << m.output_names[i];
    EXPECT_TRUE(a[i].bitwise_equal(b[i])) << "run to run";
  }
}

TEST(OnednnModel, MobileNetV2) { run_model("mobilenet_v2"); }
TEST(OnednnModel, ResNet50) { run_model("resnet50"); }
TEST(OnednnModel, DenseNet121) { run_model("densenet121"); }

}  // namespace
}  // namespace sy::onednn_test
