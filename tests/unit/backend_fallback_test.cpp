// What the runtime does when a backend misbehaves: a region it cannot build is inlined back and
// runs natively (named in a warning); results of the wrong shape are an error naming the region.
#include <gtest/gtest.h>

#include "ops/op.h"
#include "support/random_tensor.h"
#include "target/host.h"
#include "api/inputs.h"
#include "backends/reference/executor.h"
#include "native/compile.h"
#include "partition/pipeline.h"
#include "partition_test_backends.h"
#include "runtime/compiled_model.h"
#include "support/error.h"

namespace sy {
namespace {

using ops::OpCode;

// tanh(exp(x) + x) * x: alpha takes exp and add, beta takes tanh; multiply stays native.
ir::Module model() {
  ir::Expr x = ir::var("x", ir::tensor_type({4, 37}, DType::f32));
  ir::Expr t = ir::call(OpCode::Tanh, {ir::call(OpCode::Add, {ir::call(OpCode::Exp, {x}), x})});
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(OpCode::Mul, {t, x}));
  return m;
}

runtime::CompiledModel build_native(const ir::Module& m, const testing::TestBackend& a, const testing::TestBackend& b) {
  partition::PartitionOptions opts{{&a, &b}, {}, {}, ""};
  runtime::CompiledModel cm = runtime::build_modules(partition::partition_module(m, opts).module, {&a, &b}, target::host());
  native::Compiled nc = native::compile_native(cm.module);
  cm.module = nc.fused;
  cm.native = nc.executable;
  return cm;
}

TEST(BackendFallback, ARegionItsBackendCannotBuildRunsNatively) {
  testing::TestBackend alpha("alpha", {OpCode::Exp, OpCode::Add}, true), beta("beta", {OpCode::Tanh}, true);
  alpha.cannot_build = {OpCode::Add};
  ir::Module m = model();
  runtime::CompiledModel cm = build_native(m, alpha, beta);
  ASSERT_EQ(cm.fallbacks.size(), 1u);
  EXPECT_NE(cm.fallbacks[0].find("alpha could not build region @alpha_0 (alpha: cannot build add); it runs natively"),
            std::string::npos)
      << cm.fallbacks[0];
  EXPECT_EQ(cm.modules.count("alpha"), 0u);
  EXPECT_EQ(cm.modules.count("beta"), 1u);
  Tensor x = sy::random_tensor({4, 37}, DType::f32, 7);
  Tensor want = reference::run_module(m, {x}).value().at(0);
  Tensor got = cm.run({x}, 1).at(0);
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5) << i;
}

TEST(BackendFallback, ResultsOfTheWrongShapeAreAnErrorNamingTheRegion) {
  testing::TestBackend alpha("alpha", {OpCode::Exp, OpCode::Add}, true), beta("beta", {OpCode::Tanh}, true);
  alpha.wrong_result_shape = true;
  runtime::CompiledModel cm = build_native(model(), alpha, beta);
  EXPECT_TRUE(cm.fallbacks.empty());
  try {
    cm.run({sy::random_tensor({4, 37}, DType::f32, 7)}, 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("region @alpha_0 result 0: expected Tensor[(4, 37), float32], got Tensor[(1, 4, 37), float32]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sy
