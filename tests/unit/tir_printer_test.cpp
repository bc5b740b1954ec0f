// Golden text of the loop-IR printer for a small lowered kernel, before and after the passes.
#include <gtest/gtest.h>

#include "te/lower.h"
#include "tir/printer.h"

using namespace sy;
using te::Expr;

namespace {

// gemv followed by relu; the reduction split by 4 (10 = 2*4 + 2: a tail) and marked vectorized.
tir::PrimFunc gemv_relu(bool passes) {
  te::Tensor A = te::placeholder({4, 10}, DType::f32, "A");
  te::Tensor B = te::placeholder({10}, DType::f32, "B");
  auto k = te::reduce_axis(10, "k");
  te::Tensor C = te::compute({4}, [&](Expr i) { return te::sum(A(i, k.var) * B(k.var), {k}); }, "C");
  te::Tensor D = te::compute({4}, [&](Expr i) { return tir::max(C(i), tir::float_imm(0.0)); }, "D");
  te::Schedule s({D});
  auto& c = s[C];
  auto [ko, ki] = c.split(c.reduce_axis(0), 4);
  c.vectorize(ki);
  te::LowerOptions lo;
  lo.run_passes = passes;
  return te::lower(s, {A, B, D}, "gemv_relu", lo);
}

}  // namespace

TEST(TirPrinter, LoweredKernelBeforePasses) {
  EXPECT_EQ(tir::print_func(gemv_relu(false)), R"(func gemv_relu(A: float32[4, 10], B: float32[10], D: float32[4]) {
  allocate C: float32[4] {
    for i in [0, 4) {
      C[i] = 0.0f
      for k.outer in [0, 3) {
        vectorized for k.inner in [0, 4) {
          if k.outer * 4 + k.inner < 10 {
            C[i] = C[i] + A[i, k.outer * 4 + k.inner] * B[k.outer * 4 + k.inner]
          }
        }
      }
    }
    for i_1 in [0, 4) {
      D[i_1] = max(C[i_1], 0.0f)
    }
  }
}
)");
}

// Loop partition splits off the tail and simplify drops the guard; the vectorized reduction loops
// stay vectorized (C code gives them a scalar accumulator and a reduction clause).
TEST(TirPrinter, LoweredKernelAfterPasses) {
  EXPECT_EQ(tir::print_func(gemv_relu(true)), R"(func gemv_relu(A: float32[4, 10], B: float32[10], D: float32[4]) {
  allocate C: float32[4] {
    for i in [0, 4) {
      C[i] = 0.0f
      for k.outer in [0, 2) {
        vectorized for k.inner in [0, 4) {
          C[i] = C[i] + A[i, k.outer * 4 + k.inner] * B[k.outer * 4 + k.inner]
        }
      }
      vectorized for k.inner in [0, 2) {
        C[i] = C[i] + A[i, k.inner + 8] * B[k.inner + 8]
      }
    }
    for i_1 in [0, 4) {
      D[i_1] = max(C[i_1], 0.0f)
    }
  }
}
)");
}

TEST(TirPrinter, ExpressionsStatementsAndNames) {
  using namespace tir;
  Expr x = var("x"), y = var("x"), f = var("f", DType::f32);
  EXPECT_EQ(print_expr((x + y) * 3 - x / 2), "(x + x_1) * 3 - x / 2");
  EXPECT_EQ(print_expr(x - (y - 1)), "x - (x_1 - 1)");
  EXPECT_EQ(print_expr(select(logical_and(x < 3, logical_not(y >= 0)), f, cast(DType::f32, x))),
            "select(x < 3 && !(x_1 >= 0), f, float32(x))");
  EXPECT_EQ(print_expr(int_imm(7, DType::i32)), "int32(7)");
  EXPECT_EQ(print_expr(float_imm(0.5, DType::f64)), "0.5");
  EXPECT_EQ(print_expr(reduce_identity(ReduceKind::Max, DType::f32)), "-inf");
  Buffer b = buffer("T", DType::f32, {8});
  Stmt s = let_stmt(x, int_imm(2), seq({store(b, {x}, exp(f)), extern_call("ext", {b}, {x})}));
  EXPECT_EQ(print_stmt(s), "let x = 2\nT[x] = exp(f)\ncall ext(T, x)\n");
}
