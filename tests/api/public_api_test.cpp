// The public C++ API (include/switchyard/switchyard.h), linked as a user links it: only
// libswitchyard.so and its header. Values are checked against the reference target and PyTorch.
#include <gtest/gtest.h>
#include <switchyard/report.h>
#include <switchyard/switchyard.h>
#include <switchyard/target.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
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

// ---- What a tool needs (the command-line program is built on these alone) ----

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("sy_api_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

TEST(PublicApiTools, RandomTensorsAreSeededAndInRange) {
  switchyard::Tensor a = switchyard::Tensor::random(switchyard::DType::f32, {4, 100}, 7);
  switchyard::Tensor b = switchyard::Tensor::random(switchyard::DType::f32, {4, 100}, 7);
  switchyard::Tensor c = switchyard::Tensor::random(switchyard::DType::f32, {4, 100}, 8);
  ASSERT_EQ(a.numel(), 400);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), a.nbytes()), 0);
  for (int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_GE(a.data_as<float>()[i], -1.0f);
    EXPECT_LT(a.data_as<float>()[i], 1.0f);
  }
  switchyard::Tensor ids = switchyard::Tensor::random(switchyard::DType::i64, {1000}, 1);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    EXPECT_GE(ids.data_as<int64_t>()[i], 0);
    EXPECT_LT(ids.data_as<int64_t>()[i], 10);
  }
}

TEST(PublicApiTools, PreparedInputsAreTheRandomTensorsOfTheRun) {
  switchyard::Model m = switchyard::Model::load("zoo:mlp");
  switchyard::Compiled net = switchyard::compile(m);
  std::vector<switchyard::InputValue> in = net.prepare_inputs({}, 5);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].name, "input");
  EXPECT_EQ(in[0].source, "random");
  EXPECT_EQ(in[0].value.shape(), (std::vector<int64_t>{1, 64}));
  switchyard::Tensor want = switchyard::Tensor::random(switchyard::DType::f32, {1, 64}, 5);  // seed + index 0
  EXPECT_EQ(std::memcmp(in[0].value.data(), want.data(), want.nbytes()), 0);
  EXPECT_EQ(net.input_names(), (std::vector<std::string>{"input"}));
  EXPECT_EQ(net.output_names(), (std::vector<std::string>{"logits", "probs"}));
  // From a file: the file's values; a name that is no input is refused.
  std::string path = temp_path("x.npy");
  want.save_npy(path);
  std::vector<switchyard::InputValue> from_file = net.prepare_inputs({{"input", path}}, 0);
  EXPECT_EQ(from_file[0].source, path);
  EXPECT_EQ(std::memcmp(from_file[0].value.data(), want.data(), want.nbytes()), 0);
  EXPECT_THROW(net.prepare_inputs({{"nope", path}}, 0), switchyard::Error);
  std::filesystem::remove(path);
  // The compiled model against the reference executor, by position.
  std::vector<switchyard::Tensor> got = net.run_ordered({in[0].value});
  std::vector<switchyard::Tensor> ref = m.run_reference({in[0].value}, 1);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].shape(), (std::vector<int64_t>{1, 10}));
  EXPECT_LT(switchyard::relative_error(got, ref), 1e-5);
  EXPECT_EQ(switchyard::relative_error(ref, ref), 0.0);
}

TEST(PublicApiTools, RelativeErrorStatsAndNames) {
  float x[2] = {1, 2}, y[2] = {1, 4};
  std::vector<switchyard::Tensor> a{switchyard::Tensor::view(x, switchyard::DType::f32, {2})};
  std::vector<switchyard::Tensor> b{switchyard::Tensor::view(y, switchyard::DType::f32, {2})};
  EXPECT_DOUBLE_EQ(switchyard::relative_error(a, b), 0.5);  // max |a-b| = 2 over max |b| = 4
  switchyard::LatencyStats s = switchyard::latency_stats({3, 1, 2});
  EXPECT_EQ(s.runs, 3);
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 3);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  switchyard::TensorSummary ts = switchyard::summarize(b[0]);
  EXPECT_DOUBLE_EQ(ts.min, 1);
  EXPECT_DOUBLE_EQ(ts.max, 4);
  EXPECT_DOUBLE_EQ(ts.mean, 2.5);
  EXPECT_EQ(ts.nonfinite, 0);
  EXPECT_EQ(switchyard::summary_line(b[0]).rfind("(2,) float32", 0), 0u);
  EXPECT_EQ(switchyard::shape_str({1, 3, 224, 224}), "(1, 3, 224, 224)");
  EXPECT_EQ(switchyard::output_file_stems({"logits/0:0", "logits/0:0", ""}),
            (std::vector<std::string>{"logits_0_0", "logits_0_0_2", "output"}));
  auto [name, shape] = switchyard::parse_input_shape("x=1,3,8,8");
  EXPECT_EQ(name, "x");
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 3, 8, 8}));
  EXPECT_THROW(switchyard::parse_input_shape("x"), switchyard::Error);
  EXPECT_EQ(switchyard::parse_input_file("x=a.npy"), (std::pair<std::string, std::string>{"x", "a.npy"}));
}

TEST(PublicApiTools, StatsTextAndListings) {
  switchyard::Model m = switchyard::Model::load("zoo:mlp");
  switchyard::ModelStats st = m.stats();
  EXPECT_EQ(st.flops, m.flops());
  EXPECT_EQ(st.params, m.params());
  EXPECT_EQ(st.num_ops, static_cast<int64_t>(st.nodes.size()));
  int64_t sum = 0, calls = 0;
  for (const auto& n : st.nodes) sum += n.flops;
  for (const auto& [op, n] : st.op_histogram) calls += n;
  EXPECT_EQ(sum, st.flops);
  EXPECT_EQ(calls, st.num_ops);
  EXPECT_GT(st.op_histogram.count("nn.dense"), 0u);
  EXPECT_FALSE(st.compiled);
  // Text IR parses back to the same model; without weights it shows '...'.
  std::string path = temp_path("mlp.sy");
  { std::ofstream(path) << m.text(); }
  EXPECT_EQ(switchyard::Model::load(path).flops(), m.flops());
  std::filesystem::remove(path);
  EXPECT_NE(m.text(false).find("..."), std::string::npos);
  // An artifact's graph: compiled, with its plan.
  std::string art = temp_path("mlp.sya");
  switchyard::Compiled net = switchyard::compile(m);
  net.save(art);
  EXPECT_TRUE(switchyard::is_artifact(art));
  EXPECT_FALSE(switchyard::is_artifact(path));
  switchyard::ModelStats cs = switchyard::Compiled::load(art).model().stats();
  EXPECT_TRUE(cs.compiled);
  EXPECT_EQ(cs.plan.kernel_launches, net.inspect().native_kernels);
  EXPECT_EQ(cs.plan.planned_bytes, net.inspect().activation_bytes);
  std::filesystem::remove(art);
  bool mlp = false;
  for (const auto& z : switchyard::zoo_models()) mlp |= z.name == "mlp" && !z.description.empty();
  EXPECT_TRUE(mlp);
  std::vector<std::string> names;
  for (const auto& b : switchyard::backend_infos()) names.push_back(b.name);
  EXPECT_EQ(names, switchyard::available_backends());
}

TEST(PublicApiTools, TargetsAsData) {
  switchyard::TargetInfo t = switchyard::target_info("cpu -isa=avx2");
  EXPECT_EQ(t.kind, "cpu");
  EXPECT_EQ(t.isa, "avx2");
  EXPECT_EQ(t.isa_level, "x86-64-v3");
  EXPECT_EQ(t.vector_lanes_f32, 8);
  EXPECT_EQ(t.vector_registers, 16);
  EXPECT_NE(std::find(t.features.begin(), t.features.end(), "fma"), t.features.end());
  EXPECT_EQ(switchyard::target_info("reference").kind, "reference");
  EXPECT_EQ(switchyard::target_info("").str, switchyard::target_info("cpu").str);
  EXPECT_TRUE(switchyard::target_info().cannot_run_here.empty());
  EXPECT_THROW(switchyard::target_info("gpu"), switchyard::Error);
  EXPECT_FALSE(switchyard::host_info().detected.empty());
  EXPECT_FALSE(switchyard::known_features().empty());
}

TEST(PublicApiTools, PartitionAndCompileReports) {
  switchyard::Model m = switchyard::Model::load("zoo:mlp");
  std::vector<std::string> backends = switchyard::available_backends();
  if (std::find(backends.begin(), backends.end(), "onednn") == backends.end()) GTEST_SKIP() << "no onednn";
  switchyard::PartitionOptions po;
  po.backends = {"onednn"};
  std::vector<std::string> dumped;
  po.dump_after = "all";
  po.on_ir = [&](const std::string& pass, const std::string& ir) {
    dumped.push_back(pass);
    EXPECT_FALSE(ir.empty());
  };
  switchyard::Partitioned p = switchyard::partition(m, po);
  EXPECT_EQ(dumped, switchyard::partition_pass_names());
  switchyard::PartitionReport r = p.report();
  EXPECT_EQ(r.total_flops, m.flops());
  int64_t offloaded = 0;
  for (const auto& g : r.regions)
    if (g.offloaded) {
      EXPECT_EQ(g.backend, "onednn");
      offloaded += g.flops;
    }
  EXPECT_GT(offloaded, 0);
  ASSERT_FALSE(r.nodes.empty());
  EXPECT_LE(static_cast<int64_t>(r.nodes.size()), m.stats().num_ops);  // a composite is one node
  EXPECT_EQ(p.dot("t").rfind("digraph switchyard {", 0), 0u);
  EXPECT_NE(p.kernel_choices().find("kernels: "), std::string::npos);
  po.backends = {"no-such-backend"};
  EXPECT_THROW(switchyard::partition(m, po), switchyard::Error);

  switchyard::CompileOptions co;
  co.keep_generated_c = true;
  switchyard::Compiled net = switchyard::compile(m, co);
  switchyard::CompileReport cr = switchyard::compile_report(net);
  EXPECT_EQ(cr.target, net.inspect().target);
  EXPECT_EQ(cr.partition.total_flops, m.flops());
  ASSERT_TRUE(cr.has_native);
  EXPECT_EQ(cr.native.kernel_launches, net.inspect().native_kernels);
  EXPECT_FALSE(cr.native.generated_c.empty());
  EXPECT_TRUE(switchyard::compile_report(switchyard::compile(m)).native.generated_c.empty());
  EXPECT_NE(cr.native.kernel_choices.find("chosen "), std::string::npos);

  switchyard::Tensor x = switchyard::Tensor::random(switchyard::DType::f32, {1, 64}, 0);
  int seen = 0;
  switchyard::Profile prof = switchyard::profile(net, {x}, 3, 1, [&](int i) { EXPECT_EQ(i, ++seen); });
  EXPECT_EQ(prof.runs, 3);
  EXPECT_EQ(seen, 3);
  int launches = 0;
  double total = 0;
  for (const auto& k : prof.kernels) launches += k.launches, total += k.seconds;
  EXPECT_EQ(launches, static_cast<int>(prof.calls.size()));
  EXPECT_EQ(static_cast<int64_t>(prof.calls.size()), cr.native.kernel_launches);  // no external calls
  EXPECT_NEAR(total, prof.total_seconds, 1e-9);
  for (size_t i = 1; i < prof.kernels.size(); ++i) EXPECT_GE(prof.kernels[i - 1].seconds, prof.kernels[i].seconds);
  EXPECT_EQ(switchyard::profile_table(prof, 0).rfind("profile: " + std::to_string(prof.calls.size()) + " calls", 0), 0u);
  EXPECT_EQ(switchyard::profile_table(switchyard::Profile{}, 0), "");
}

TEST(PublicApiTools, MergesRecordsFiles) {
  std::string a = temp_path("a.jsonl"), out = temp_path("merged.jsonl");
  { std::ofstream f(a); }
  switchyard::MergeResult r = switchyard::merge_records({a}, out);
  EXPECT_EQ(r.read, 0);
  EXPECT_EQ(r.merged, 0);
  EXPECT_TRUE(std::filesystem::exists(out));
  try {
    switchyard::merge_records({a + ".missing"}, out);
    FAIL() << "no error for a missing file";
  } catch (const switchyard::Error& e) {
    EXPECT_EQ(std::string(e.what()), a + ".missing: no such records file");
  }
  std::filesystem::remove(a);
  std::filesystem::remove(out);
}
