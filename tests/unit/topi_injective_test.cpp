// The default injective schedule on a fused elementwise chain, through the whole native path.
#include <gtest/gtest.h>

#include "native_op_test_util.h"
#include "topi/topi.h"

namespace sy {
namespace {

TEST(TopiInjective, AnOpWithoutImplementationIsAClearError) {
  if (topi::find(ops::OpCode::TopK)) GTEST_SKIP() << "topk has an implementation now";
  Tensor x = Tensor::from_vector<float>({4}, {1, 2, 3, 4});
  try {
    testing::run_native_op(ops::OpCode::TopK, nullptr, {x});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no implementation of topk"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sy
