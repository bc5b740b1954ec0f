// Golden before/after tests of the partition passes (tests/golden/partition/): each case's input
// runs through the pipeline with the test backends; the IR after each pass that has an expected
// file (<case>.<pass>.expected.sy) must print exactly as that file. SY_UPDATE_GOLDEN=1 rewrites
// the expected files (review the diff before committing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ops/op.h"
#include "target/host.h"
#include "backends/reference/executor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "partition/pipeline.h"
#include "partition_test_backends.h"
#include "runtime/compiled_model.h"

namespace sy {
namespace {

namespace fs = std::filesystem;
using ops::OpCode;

fs::path golden_dir() { return fs::path(SY_SOURCE_DIR) / "tests" / "golden" / "partition"; }

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

ir::Module parse_file(const fs::path& p) {
  Result<ir::Module> m = ir::parse_module(read(p));
  EXPECT_TRUE(m.is_ok()) << p << ": " << m.status().message();
  return m.value();
}

struct Backends {
  testing::TestBackend alpha{"alpha", {OpCode::Add, OpCode::Mul, OpCode::Relu, OpCode::Dense}, true};
  testing::TestBackend beta{"beta", {OpCode::Add, OpCode::Sub, OpCode::Relu, OpCode::Tanh}};
  Backends() {
    pattern::Pattern dense_relu = pattern::op(
        OpCode::Relu, {pattern::op(OpCode::Dense, {pattern::wildcard(), pattern::constant()})});
    alpha.rules.push_back({"alpha.dense_relu", dense_relu, nullptr});
  }
};

// Runs the pipeline on a case and compares every pass that has an expected file.
partition::PartitionResult check_case(const std::string& name, const partition::PartitionOptions& opts,
                                      const std::string& variant = "") {
  ir::Module in = parse_file(golden_dir() / (name + ".sy"));
  bool update = std::getenv("SY_UPDATE_GOLDEN") != nullptr;
  int compared = 0;
  auto after = [&](const std::string& pass, const ir::Module& m) {
    fs::path expected = golden_dir() / (name + variant + "." + pass + ".expected.sy");
    std::string got = ir::print_module(m);
    if (update && (pass == "merge_composites" || pass == "annotate_targets" || pass == "merge_regions" ||
                   pass == "partition_graph")) {
      std::ofstream(expected) << got;
    }
    if (!fs::exists(expected)) return;
    ++compared;
    EXPECT_EQ(got, ir::print_module(parse_file(expected))) << "after " << pass << " (" << expected << ")";
  };
  partition::PartitionResult r = partition::partition_module(in, opts, after);
  EXPECT_GT(compared, 0) << "no expected files for " << name << variant;
  return r;
}

// The partitioned module must compute what the original computes.
void check_same_outputs(const std::string& name, const partition::PartitionResult& r,
                        const std::vector<const backends::Backend*>& bs) {
  ir::Module in = parse_file(golden_dir() / (name + ".sy"));
  std::vector<Tensor> inputs;
  for (const ir::Expr& p : in.main().params) {
    Tensor t(DType::f32, ir::shape_of(p));
    float* d = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) d[i] = static_cast<float>((i * 37 % 19) - 9) / 7.0f;
    inputs.push_back(t);
  }
  std::vector<Tensor> want = reference::run_module(in, inputs).value();
  runtime::CompiledModel cm = runtime::build_modules(r.module, bs, target::host());
  std::vector<Tensor> got = cm.run(inputs, 1);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape());
    for (int64_t i = 0; i < got[k].numel(); ++i) EXPECT_EQ(got[k].data<float>()[i], want[k].data<float>()[i]);
  }
}

TEST(PartitionGolden, MergeRegionsSplitsARegionThatWouldFormACycle) {
  Backends b;
  partition::PartitionOptions opts{{&b.alpha}, {}, {}, ""};
  partition::PartitionResult r = check_case("cycle", opts);
  // add -> exp -> multiply: merging the first add with multiply would need exp inside; the
  // final add does merge with multiply.
  int offloaded = 0;
  for (const auto& reg : r.report.regions) offloaded += reg.offloaded;
  EXPECT_EQ(offloaded, 2);
  check_same_outputs("cycle", r, {&b.alpha});
}

TEST(PartitionGolden, TwoBackendsClaimingOneNodeFollowPriorityOrder) {
  Backends b;
  partition::PartitionOptions opts{{&b.alpha, &b.beta}, {}, {}, ""};
  partition::PartitionResult r = check_case("two_backends", opts);
  ASSERT_EQ(r.report.decisions.size(), 4u);
  EXPECT_EQ(r.report.decisions[0].node, "add");
  EXPECT_EQ(r.report.decisions[0].backend, "alpha");
  EXPECT_EQ(r.report.decisions[0].why, "alpha is the first backend that supports it");
  ASSERT_EQ(r.report.decisions[0].rejections.size(), 1u);
  EXPECT_EQ(r.report.decisions[0].rejections[0].second, "supported, but alpha comes first");
  EXPECT_EQ(r.report.decisions[1].backend, "beta");  // only beta has tanh
  EXPECT_EQ(r.report.decisions[1].rejections[0].second, "alpha: tanh is not in its op list");
  EXPECT_EQ(r.report.decisions[3].node, "nn.relu");
  EXPECT_EQ(r.report.decisions[3].backend, "alpha");
  check_same_outputs("two_backends", r, {&b.alpha, &b.beta});
}

TEST(PartitionGolden, UserOverrideMovesOneOpToAnotherBackend) {
  Backends b;
  partition::PartitionOptions opts{{&b.alpha, &b.beta}, {{"add", "beta"}}, {}, ""};
  partition::PartitionResult r = check_case("two_backends", opts, ".prefer_beta");
  EXPECT_EQ(r.report.decisions[0].backend, "beta");
  EXPECT_EQ(r.report.decisions[0].why, "placed on beta by the user");
  check_same_outputs("two_backends", r, {&b.alpha, &b.beta});
}

// A later backend's composite does not take an op an earlier backend supports alone (op-level
// claims are decided after composites): the priority order decides, as for single ops. The
// oneDNN hook's pooling composite had taken EfficientNet's pools from the oneDNN backend before it.
TEST(PartitionGolden, ALaterBackendsCompositeYieldsToAnEarlierBackendsOp) {
  Backends b;
  b.beta.rules.push_back({"beta.tanh_sub_relu",
                          pattern::op(OpCode::Relu, {pattern::op(OpCode::Sub, {pattern::op(OpCode::Tanh, {pattern::wildcard()}),
                                                                                pattern::wildcard()})}),
                          nullptr});
  ir::Module in = parse_file(golden_dir() / "two_backends.sy");
  partition::PartitionResult r = partition::partition_module(in, partition::PartitionOptions{{&b.alpha, &b.beta}, {}, {}, ""});
  ASSERT_EQ(r.report.decisions.size(), 4u);
  EXPECT_EQ(r.report.decisions[3].node, "nn.relu");
  EXPECT_EQ(r.report.decisions[3].backend, "alpha") << "alpha comes first and supports relu alone";
  EXPECT_EQ(r.report.decisions[1].backend, "beta");
  // Listed first, beta's composite takes its three ops.
  partition::PartitionResult rb = partition::partition_module(in, partition::PartitionOptions{{&b.beta, &b.alpha}, {}, {}, ""});
  bool composite = false;
  for (const auto& d : rb.report.decisions) composite |= d.node == "composite beta.tanh_sub_relu" && d.backend == "beta";
  EXPECT_TRUE(composite);
  check_same_outputs("two_backends", r, {&b.alpha, &b.beta});
}

TEST(PartitionGolden, CompositesMultiOutputRegionsAndSmallRegionsLeftNative) {
  Backends b;
  partition::PartitionOptions opts{{&b.alpha, &b.beta}, {}, {}, ""};
  partition::PartitionResult r = check_case("composite_multi_output", opts);
  bool lone_tanh_native = false;
  for (const auto& d : r.report.decisions)
    if (d.node == "tanh") {
      lone_tanh_native = d.backend.empty() && !d.rejections.empty() &&
                         d.rejections[0].second.find("region not offloaded: a lone elementwise op") == 0;
    }
  EXPECT_TRUE(lone_tanh_native);
  check_same_outputs("composite_multi_output", r, {&b.alpha, &b.beta});
}

}  // namespace
}  // namespace sy
