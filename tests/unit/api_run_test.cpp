// The pieces of `switchyard run`: input preparation and checks, output names, summaries,
// latency statistics, flag parsing, model loading errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "api/inputs.h"
#include "api/latency.h"
#include "api/load.h"
#include "api/outputs.h"
#include "support/npy.h"
#include "support/random_tensor.h"

using namespace sy;

namespace {

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

ir::Module two_input_module() {
  ir::Expr a = ir::var("a", ir::tensor_type({2, 3}, DType::f32));
  ir::Expr b = ir::var("ids", ir::tensor_type({4}, DType::i64));
  ir::Module m;
  m.functions["main"] = ir::function({a, b}, ir::tuple({a, b}));
  return m;
}

}  // namespace

TEST(ApiInputs, RandomTensorsAreSeededAndInRange) {
  Tensor f = sy::random_tensor({1000}, DType::f32, 3);
  EXPECT_TRUE(f.bitwise_equal(sy::random_tensor({1000}, DType::f32, 3)));
  EXPECT_FALSE(f.bitwise_equal(sy::random_tensor({1000}, DType::f32, 4)));
  double lo = 1, hi = -1;
  for (int64_t i = 0; i < f.numel(); ++i) {
    lo = std::min(lo, f.get_as_double(i));
    hi = std::max(hi, f.get_as_double(i));
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.9);
  EXPECT_GT(hi, 0.9);
  Tensor ids = sy::random_tensor({1000}, DType::i64, 3);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    EXPECT_GE(ids.get_as_int(i), 0);
    EXPECT_LT(ids.get_as_int(i), 10);
  }
  Tensor b = sy::random_tensor({100}, DType::boolean, 3);
  int64_t ones = 0;
  for (int64_t i = 0; i < b.numel(); ++i) ones += b.get_as_int(i);
  EXPECT_GT(ones, 20);
  EXPECT_LT(ones, 80);
}

TEST(ApiInputs, ChecksFilesAgainstTheModel) {
  ir::Module m = two_input_module();
  auto dir = std::filesystem::temp_directory_path() / "sy_api_inputs_test";
  std::filesystem::create_directories(dir);
  std::string good = (dir / "good.npy").string(), shape = (dir / "shape.npy").string(),
              f64 = (dir / "f64.npy").string();
  npy::write_file(good, Tensor(DType::f32, {2, 3}));
  npy::write_file(shape, Tensor(DType::f32, {3, 2}));
  npy::write_file(f64, Tensor(DType::f64, {2, 3}));

  auto in = api::prepare_inputs(m, {{"a", good}}, 0);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].source, good);
  EXPECT_EQ(in[1].source, "random");
  EXPECT_EQ(in[1].value.dtype(), DType::i64);

  EXPECT_EQ(error_of([&] { api::prepare_inputs(m, {{"a", shape}}, 0); }),
            "input 'a': " + shape + " has shape (3, 2), the model expects (2, 3)");
  EXPECT_EQ(error_of([&] { api::prepare_inputs(m, {{"a", f64}}, 0); }),
            "input 'a': " + f64 + " has dtype float64, the model expects float32 (convert with arr.astype('float32'))");
  EXPECT_EQ(error_of([&] { api::prepare_inputs(m, {{"nope", good}}, 0); }),
            "unknown input 'nope' (the model's inputs: a, ids)");
  std::filesystem::remove_all(dir);
}

TEST(ApiInputs, ParsesFlags) {
  EXPECT_EQ(api::parse_input_file("x=a=b.npy"), (std::pair<std::string, std::string>{"x", "a=b.npy"}));
  EXPECT_NE(error_of([] { api::parse_input_file("x.npy"); }).find("expected NAME=FILE.npy"), std::string::npos);
  EXPECT_EQ(api::parse_input_shape("input=1,3,224,224"), (std::pair<std::string, Shape>{"input", {1, 3, 224, 224}}));
  EXPECT_EQ(api::parse_input_shape("s="), (std::pair<std::string, Shape>{"s", {}}));
  EXPECT_EQ(error_of([] { api::parse_input_shape("x=1,three,16"); }),
            "--input-shape 'x=1,three,16': dimension 'three' is not a non-negative integer");
  EXPECT_NE(error_of([] { api::parse_input_shape("x=1,-2"); }).find("'-2'"), std::string::npos);
  EXPECT_NE(error_of([] { api::parse_input_shape("1,2"); }).find("NAME=D1,D2"), std::string::npos);
}

TEST(ApiOutputs, SanitisesAndDeduplicatesFileNames) {
  EXPECT_EQ(api::sanitize_file_name("logits/0:0"), "logits_0_0");
  EXPECT_EQ(api::sanitize_file_name(".."), "_.");
  EXPECT_EQ(api::sanitize_file_name(""), "output");
  EXPECT_EQ(api::sanitize_file_name("out-1.x"), "out-1.x");
  EXPECT_EQ(api::output_file_stems({"a/b", "a:b", "c"}), (std::vector<std::string>{"a_b", "a_b_2", "c"}));
}

TEST(ApiOutputs, Summaries) {
  auto t = Tensor::from_vector<float>({2, 4}, {1, -2, 3, NAN, 5, 6, 7, 8});
  api::TensorSummary s = api::summarize(t);
  EXPECT_EQ(s.first.size(), 6u);
  EXPECT_EQ(s.min, -2);
  EXPECT_EQ(s.max, 8);
  EXPECT_EQ(s.nonfinite, 1);
  EXPECT_NEAR(s.mean, 28.0 / 7, 1e-12);
  std::string line = api::summary_line(t, s);
  EXPECT_EQ(line.rfind("(2, 4) float32  min -2  max 8", 0), 0u) << line;
  EXPECT_NE(line.find("(1 NaN/inf)"), std::string::npos) << line;
}

TEST(ApiLatency, MedianMinP90) {
  api::LatencyStats s = api::latency_stats({5, 1, 4, 2, 3, 10, 9, 8, 7, 6});
  EXPECT_EQ(s.runs, 10);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_EQ(s.median, 5.5);
  EXPECT_EQ(s.p90, 9);
  EXPECT_EQ(api::latency_stats({4}).p90, 4);
}

TEST(ApiLoad, ReportsProblemsWithTheSpec) {
  EXPECT_NE(error_of([] { api::load_model("/nonexistent/m.onnx"); }).find("/nonexistent/m.onnx: no such file"),
            std::string::npos);
  EXPECT_NE(error_of([] { api::load_model("zoo:nope"); }).find("unknown zoo model 'nope'"), std::string::npos);
  ir::Module m = api::load_model("zoo:mlp");
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"logits", "probs"}));
  api::LoadOptions o;
  o.input_shapes["input"] = {3, 64};
  EXPECT_EQ(ir::shape_of(api::load_model("zoo:mlp", o).main().params[0]), (Shape{3, 64}));
}
