// The public C++ API (include/switchyard/switchyard.h), linked as a user links it: only
// libswitchyard.so and its header. Values are checked against the reference target and PyTorch.
#include <gtest/gtest.h>
#include <switchyard/switchyard.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace {

std::string model_dir() {
  const char* d = std::getenv("SY_API_TEST_MODEL");  // an exported model (tests/models)
  return d ? d : "";
}

float max_abs_diff(const switchyard::Tensor& a, const switchyard::Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  float worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(a.data_as<float>()[i] - b.data_as<float>()[i]));
  return worst;
}

switchyard::Tensor random_input(std::vector<int64_t> shape, unsigned seed) {
  switchyard::Tensor t(switchyard::DType::f32, std::move(shape));
  unsigned s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data_as<float>()[i] = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 2 - 1;
  }
  return t;
}

TEST(PublicApi, CompilesAndRunsAZooModelLikeTheReference) {
  switchyard::Model m = switchyard::Model::load("zoo:mlp");
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_GT(m.flops(), 0);
  switchyard::Tensor x = random_input(m.inputs()[0].shape, 1);
  switchyard::Compiled native = switchyard::compile(m);
  switchyard::CompileOptions ref;
  ref.target = "reference";
  switchyard::Compiled reference = switchyard::compile(m, ref);
  auto a = native.run({{m.inputs()[0].name, x}});
  auto b = reference.run({{m.inputs()[0].name, x}});
  ASSERT_EQ(a.size(), m.outputs().size());
  for (const switchyard::TensorInfo& o : m.outputs()) EXPECT_LT(max_abs_diff(a.at(o.name), b.at(o.name)), 1e-4) << o.name;
  switchyard::Summary s = native.inspect();
  EXPECT_GT(s.native_kernels, 0);
  EXPECT_EQ(s.inputs[0].shape, m.inputs()[0].shape);
}

TEST(PublicApi, SavesAndLoadsAnArtifact) {
  switchyard::Model m = switchyard::Model::load("zoo:mlp");
  switchyard::Compiled c = switchyard::compile(m);
  std::string path = (std::filesystem::temp_directory_path() / "sy_public_api_test.sya").string();
  c.save(path);
  switchyard::Compiled loaded = switchyard::Compiled::load(path);
  switchyard::Tensor x = random_input(m.inputs()[0].shape, 2);
  auto a = c.run({{m.inputs()[0].name, x}});
  auto b = loaded.run({{m.inputs()[0].name, x}});
  for (const switchyard::TensorInfo& o : m.outputs()) EXPECT_EQ(max_abs_diff(a.at(o.name), b.at(o.name)), 0.0f);
  std::filesystem::remove(path);
}

TEST(PublicApi, ErrorsCarryTheCliMessage) {
  try {
    switchyard::Model::load("/nonexistent/model.onnx");
    FAIL() << "no error";
  } catch (const switchyard::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx: no such file"), std::string::npos) << e.what();
  }
  switchyard::Model m = switchyard::Model::load("zoo:mlp");
  switchyard::CompileOptions o;
  o.backends = {"nosuchlib"};
  EXPECT_THROW(switchyard::compile(m, o), switchyard::Error);
  switchyard::Compiled c = switchyard::compile(m);
  EXPECT_THROW(c.run({}), switchyard::Error);  // the input is missing
  std::vector<int64_t> wrong = m.inputs()[0].shape;
  wrong.back() += 1;
  try {
    c.run({{m.inputs()[0].name, switchyard::Tensor(switchyard::DType::f32, wrong)}});
    FAIL() << "no error";
  } catch (const switchyard::Error& e) {
    EXPECT_NE(std::string(e.what()).find(m.inputs()[0].name), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.run({{m.inputs()[0].name, random_input(m.inputs()[0].shape, 3)}, {"extra", switchyard::Tensor()}}),
               switchyard::Error);
}

TEST(PublicApi, RunsFromFourThreadsAtOnceAsSequentially) {
  switchyard::Model m = switchyard::Model::load("zoo:resnet18");
  switchyard::CompileOptions o;
  o.backends = {"onednn"};
  switchyard::Compiled c = switchyard::compile(m, o);
  const std::string in = m.inputs()[0].name;
  std::vector<switchyard::Tensor> xs, want(4), got(4);
  for (unsigned i = 0; i < 4; ++i) xs.push_back(random_input(m.inputs()[0].shape, 10 + i));
  for (size_t i = 0; i < 4; ++i) want[i] = c.run({{in, xs[i]}}, 1).begin()->second;
  std::vector<std::thread> ts;
  for (size_t i = 0; i < 4; ++i)
    ts.emplace_back([&, i] {
      for (int rep = 0; rep < 3; ++rep) got[i] = c.run({{in, xs[i]}}, 1).begin()->second;
    });
  for (auto& t : ts) t.join();
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(max_abs_diff(got[i], want[i]), 0.0f) << "thread " << i;
}

TEST(PublicApi, RunsFromTheCallersBuffersIntoTheCallersBuffers) {
  switchyard::Model m = switchyard::Model::load("zoo:mlp");
  switchyard::Compiled c = switchyard::compile(m);
  switchyard::Tensor x = random_input(m.inputs()[0].shape, 4);
  std::vector<float> mine(static_cast<size_t>(x.numel()));
  std::copy(x.data_as<float>(), x.data_as<float>() + x.numel(), mine.begin());
  switchyard::Tensor view = switchyard::Tensor::view(mine.data(), switchyard::DType::f32, x.shape());
  EXPECT_EQ(view.data(), mine.data());
  const switchyard::TensorInfo out = m.outputs()[0];
  std::vector<float> result(1);
  for (int64_t d : out.shape) result.resize(result.size() * static_cast<size_t>(d));
  std::map<std::string, switchyard::Tensor> outs{
      {out.name, switchyard::Tensor::view(result.data(), switchyard::DType::f32, out.shape)}};
  c.run({{m.inputs()[0].name, view}}, outs);
  auto want = c.run({{m.inputs()[0].name, x}});
  EXPECT_EQ(max_abs_diff(outs.at(out.name), want.at(out.name)), 0.0f);
}

TEST(PublicApi, MatchesPyTorchOnAnExportedModel) {
  if (model_dir().empty()) GTEST_SKIP() << "SY_API_TEST_MODEL not set";
  switchyard::Model m = switchyard::Model::load(model_dir() + "/model.onnx");
  switchyard::CompileOptions o;
  o.backends = {"onednn"};
  switchyard::Compiled c = switchyard::compile(m, o);
  auto y = c.run({{m.inputs()[0].name, switchyard::Tensor::load_npy(model_dir() + "/input.npy")}});
  switchyard::Tensor want = switchyard::Tensor::load_npy(model_dir() + "/reference/logits.npy");
  EXPECT_LT(max_abs_diff(y.begin()->second, want), 1e-4);
}

}  // namespace
