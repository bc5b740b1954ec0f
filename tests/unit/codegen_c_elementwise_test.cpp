// Native path end to end on elementwise kernels: broadcasting, dtypes, inlining, tails.
#include "native_test_util.h"

using namespace sy;
using namespace sy::nativetest;
using te::Expr;

TEST(CodegenCElementwise, BroadcastAddRelu) {
  te::Tensor A = te::placeholder({4, 3, 5}, DType::f32, "A");
  te::Tensor B = te::placeholder({3, 1}, DType::f32, "B");
  te::Tensor C = te::compute({4, 3, 5}, [&](Expr i, Expr j, Expr k) {
    return tir::max(A(i, j, k) + B(j, 0), tir::float_imm(0.0));
  }, "C");
  te::Schedule s({C});
  tir::PrimFunc f = te::lower(s, {A, B, C}, "bcast_add_relu");
  auto m = build_one(f);
  Tensor a = random_tensor({4, 3, 5}, 1), b = random_tensor({3, 1}, 2), c(DType::f32, {4, 3, 5});
  run(*m, "bcast_add_relu", {&a, &b, &c});
  Tensor want(DType::f32, {4, 3, 5});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) {
        const int64_t x = (i * 3 + j) * 5 + k;
        want.data<float>()[x] = std::max(a.data<float>()[x] + b.data<float>()[j], 0.0f);
      }
  expect_close(c, want);
}
