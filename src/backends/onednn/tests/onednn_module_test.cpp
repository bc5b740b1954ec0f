// The runtime module: multi-output regions, save/load round trip, version checks, determinism,
// plans per thread count, input validation.
#include "ops/op.h"
#include "target/host.h"
#include "test_util.h"

namespace sy::onednn_test {
namespace {

// Two outputs (one of them also feeding the other) plus an input returned as is.
ir::Expr multi_output_region() {
  ir::Expr x = input("x", {1, 16, 8, 8});
  ir::Expr w = cst({16, 16, 3, 3}, 300, -0.2f, 0.2f);
  ops::Conv2dAttrs a;
  a.padding = {1, 1, 1, 1};
  ir::Expr c = composite("onednn.conv2d_act", {x, w}, [&](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Relu, {ir::call(OpCode::Conv2d, {p[0], p[1]}, a)});
  });
  ops::Pool2dAttrs pa;
  pa.kernel = {2, 2};
  pa.strides = {2, 2};
  ir::Expr pool = ir::call(OpCode::MaxPool2d, {c}, pa);
  return region({x}, ir::tuple({c, pool, x}));
}

TEST(OnednnModule, MultiOutputRegion) {
  ir::Expr fn = multi_output_region();
  Tensor in = random({1, 16, 8, 8}, 30);
  expect_matches_reference(fn, {in}, 1e-5);
  std::vector<Tensor> got = run_onednn(fn, {in});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].shape(), (Shape{1, 16, 4, 4}));
  EXPECT_TRUE(got[2].bitwise_equal(in));
}

TEST(OnednnModule, SaveLoadRoundTripIsBitIdentical) {
  ir::Expr fn = multi_output_region();
  Tensor in = random({1, 16, 8, 8}, 31);
  omp_set_num_threads(2);
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  std::vector<Tensor> a = mod->run("onednn_0", {in});
  std::string bytes = mod->save();
  EXPECT_LT(bytes.size(), 200u);  // no weights in the module's own state
  auto loaded = backend().load(bytes, {{"onednn_0", fn}});
  std::vector<Tensor> b = loaded->run("onednn_0", {in});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].bitwise_equal(b[i])) << "output " << i;
}

TEST(OnednnModule, LoadRejectsIncompatibleBytes) {
  ir::Expr fn = multi_output_region();
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  std::string bytes = mod->save();
  auto expect_error = [&](const std::string& b, const std::string& needle,
                          std::vector<backends::ExternFunction> fns) {
    try {
      backend().load(b, fns);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::string v2 = bytes;
  v2.replace(v2.find("\n1\n"), 3, "\n2\n");
  expect_error(v2, "format version 2 is not supported (this build reads version 1)", {{"onednn_0", fn}});
  expect_error("garbage", "bad magic", {{"onednn_0", fn}});
  expect_error(bytes.substr(0, bytes.size() - 4), "saved for functions", {{"onednn_0", fn}});
  expect_error(bytes, "saved for functions [onednn_0] but loaded with [onednn_9]", {{"onednn_9", fn}});
}

TEST(OnednnModule, DeterministicAndCorrectAtEachThreadCount) {
  ir::Expr fn = multi_output_region();
  Tensor in = random({1, 16, 8, 8}, 32);
  std::vector<Tensor> want = run_reference(fn, {in});
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  for (int t : {1, 2, 1}) {
    omp_set_num_threads(t);
    std::vector<Tensor> a = mod->run("onednn_0", {in});
    std::vector<Tensor> b = mod->run("onednn_0", {in});
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(a[i].bitwise_equal(b[i])) << "threads " << t << " output " << i;
      EXPECT_LE(rel_err(a[i], want[i]), 1e-5);
    }
  }
}

TEST(OnednnModule, RejectsBadInputsAndFunctions) {
  ir::Expr fn = multi_output_region();
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  EXPECT_THROW(mod->run("onednn_0", {random({1, 16, 8, 9}, 1)}), Error);
  EXPECT_THROW(mod->run("onednn_0", {}), Error);
  EXPECT_THROW(mod->run("nope", {random({1, 16, 8, 8}, 1)}), Error);
  ir::Expr x = input("x", {2, 2});
  ir::Expr other = ir::function({x}, ir::call(OpCode::Relu, {x}), {{"Compiler", "otherlib"}});
  try {
    backend().compile({{"f", other}}, target::host());
    ADD_FAILURE() << "accepted a function for another compiler";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected \"onednn\""), std::string::npos) << e.what();
  }
}

// Weights passed as region parameters (not constants) are reordered on every run.
TEST(OnednnModule, RuntimeWeights) {
  ir::Expr x = input("x", {1, 8, 5, 5});
  ir::Expr w = input("w", {16, 8, 3, 3});
  ir::Expr b = input("b", {16});
  ir::Expr dw = input("dw", {4, 16});
  ir::Expr c = composite("onednn.conv2d_act", {x, w, b}, [](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Relu, {ir::call(OpCode::Conv2d, {p[0], p[1], p[2]}, ops::Conv2dAttrs{})});
  });
  ir::Expr g = ir::call(OpCode::GlobalAvgPool2d, {c});
  ops::ReshapeAttrs rs;
  rs.newshape = {1, 16};
  ir::Expr y = ir::call(OpCode::Dense, {ir::call(OpCode::Reshape, {g}, rs), dw});
  expect_matches_reference(region({x, w, b, dw}, y),
                           {random({1, 8, 5, 5}, 33), random({16, 8, 3, 3}, 34), random({16}, 35), random({4, 16}, 36)},
                           1e-5);
}

}  // namespace
}  // namespace sy::onednn_test

namespace sy::onednn_test {
namespace {

TEST(OnednnModule, PlansPerThreadCountShareReorderedWeights) {
  ir::Expr fn = multi_output_region();
  omp_set_num_threads(1);
  backends::onednn::OnednnModule mod({{"onednn_0", fn}});
  EXPECT_GT(mod.stats("onednn_0").weight_bytes, 0u);
  omp_set_num_threads(2);
  EXPECT_EQ(mod.stats("onednn_0").weight_bytes, 0u);  // the 2-thread plan reuses them
  EXPECT_LE(rel_err(mod.run("onednn_0", {random({1, 16, 8, 8}, 3)})[0],
                    run_reference(fn, {random({1, 16, 8, 8}, 3)})[0]),
            1e-5);
}

}  // namespace
}  // namespace sy::onednn_test
