// The backend is registered and runs the smallest region.
#include "test_util.h"

namespace sy::onednn_test {

TEST(OnednnSmoke, RegisteredAndRunsRelu) {
  EXPECT_EQ(backend().name(), "onednn");
  ir::Expr x = input("x", {2, 5});
  ir::Expr fn = region({x}, ir::call(OpCode::Relu, {x}));
  expect_matches_reference(fn, {random({2, 5}, 1)}, 0.0);
}

}  // namespace sy::onednn_test
