// merge_regions must not merge two regions that another region connects both ways: in the rebuilt
// graph a region is one node, so a -> (region R) -> b with R fed by a and feeding b is a cycle.
#include <gtest/gtest.h>

#include "ops/op.h"
#include "support/random_tensor.h"
#include "target/host.h"
#include "api/inputs.h"
#include "backends/reference/executor.h"
#include "partition/pipeline.h"
#include "partition_test_backends.h"
#include "runtime/compiled_model.h"

namespace sy {
namespace {

using ops::OpCode;

TEST(MergeRegions, ARegionBetweenTwoOthersIsOneNodeOfTheRebuiltGraph) {
  // A = exp(x) and B = add(A, y) are alpha's; y = x*x and xx = A*y are beta's (one region).
  // Merging A with B would make {A, B} need y and {y, xx} need A.
  ir::Expr x = ir::var("x", ir::tensor_type({3, 5}, DType::f32));
  ir::Expr a = ir::call(OpCode::Exp, {x});
  ir::Expr y = ir::call(OpCode::Mul, {x, x});
  ir::Expr xx = ir::call(OpCode::Mul, {a, y});
  ir::Expr b = ir::call(OpCode::Add, {a, y});
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::tuple({xx, b}));
  testing::TestBackend alpha("alpha", {OpCode::Exp, OpCode::Add}, true), beta("beta", {OpCode::Mul}, true);
  partition::PartitionOptions opts{{&alpha, &beta}, {}, {}, ""};
  partition::PartitionResult r = partition::partition_module(m, opts);
  int offloaded = 0;
  for (const auto& reg : r.report.regions) offloaded += reg.offloaded;
  EXPECT_EQ(offloaded, 3);  // alpha's two regions stay apart; beta's one
  runtime::CompiledModel cm = runtime::build_modules(r.module, {&alpha, &beta}, target::host());
  Tensor in = sy::random_tensor({3, 5}, DType::f32, 3);
  std::vector<Tensor> want = reference::run_module(m, {in}).value(), got = cm.run({in}, 1);
  ASSERT_EQ(got.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(got[k].bitwise_equal(want[k])) << "output " << k;
}

}  // namespace
}  // namespace sy
