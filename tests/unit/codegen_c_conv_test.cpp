// conv2d NCHW through the native path against the reference executor's kernel.
#include "backends/reference/kernels.h"
#include "ir/type.h"
#include "native_test_util.h"
#include "ops/attrs.h"
#include "ops/op.h"

using namespace sy;
using namespace sy::nativetest;
using te::Expr;

namespace {

struct Conv {
  te::Tensor X, W, P, Y;
  Conv(Shape xs, Shape ws, int64_t stride, int64_t pad) {
    const int64_t N = xs[0], C = xs[1], H = xs[2], Wd = xs[3], F = ws[0], KH = ws[2], KW = ws[3];
    const int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (Wd + 2 * pad - KW) / stride + 1;
    X = te::placeholder(xs, DType::f32, "X");
    W = te::placeholder(ws, DType::f32, "W");
    P = te::compute({N, C, H + 2 * pad, Wd + 2 * pad}, [&](Expr n, Expr c, Expr h, Expr w) {
      Expr inside = tir::logical_and(tir::logical_and(h >= pad, h < H + pad), tir::logical_and(w >= pad, w < Wd + pad));
      Expr hh = tir::min(tir::max(h - pad, tir::int_imm(0)), tir::int_imm(H - 1));
      Expr ww = tir::min(tir::max(w - pad, tir::int_imm(0)), tir::int_imm(Wd - 1));
      return tir::select(inside, X(n, c, hh, ww), tir::float_imm(0.0));
    }, "P");
    auto rc = te::reduce_axis(C, "rc"), ry = te::reduce_axis(KH, "ry"), rx = te::reduce_axis(KW, "rx");
    Y = te::compute({N, F, OH, OW}, [&](Expr n, Expr f, Expr y, Expr x) {
      return te::sum(P(n, rc.var, y * stride + ry.var, x * stride + rx.var) * W(f, rc.var, ry.var, rx.var), {rc, ry, rx});
    }, "Y");
  }
};

Tensor reference_conv(const Tensor& x, const Tensor& w, int64_t stride, int64_t pad, const Shape& out) {
  ops::Conv2dAttrs a;
  a.strides = {stride, stride};
  a.padding = {pad, pad, pad, pad};
  a.dilation = {1, 1};
  a.groups = 1;
  return reference::eval_op(ops::OpCode::Conv2d, a, {x, w}, ir::tensor_type(out, DType::f32)).at(0);
}

}  // namespace

TEST(CodegenCConv, PadInlinedDefaultLoops) {
  Conv cv({1, 3, 9, 11}, {4, 3, 3, 3}, 2, 1);
  te::Schedule s({cv.Y});
  s[cv.P].compute_inline();
  auto m = build_one(te::lower(s, {cv.X, cv.W, cv.Y}, "conv_s2"));
  Tensor x = random_tensor({1, 3, 9, 11}, 31), w = random_tensor({4, 3, 3, 3}, 32), y(DType::f32, cv.Y.shape());
  run(*m, "conv_s2", {&x, &w, &y});
  expect_close(y, reference_conv(x, w, 2, 1, cv.Y.shape()), 1e-4);
}

TEST(CodegenCConv, TiledVectorizedParallelWithPaddedRowsComputedAt) {
  Conv cv({2, 8, 14, 14}, {16, 8, 3, 3}, 1, 1);
  te::Schedule s({cv.Y});
  te::Tensor YL = s.cache_write(cv.Y);
  auto& y = s[cv.Y];
  auto nf = y.fuse(y.axis(0), y.axis(1));
  y.parallel(nf);
  auto [xo, xi] = y.split(y.axis(3), 16);
  y.vectorize(xi);
  s[YL].compute_at(y, y.axis(2));  // one output row at a time
  auto& yl = s[YL];
  yl.reorder({yl.reduce_axis(0), yl.reduce_axis(1), yl.reduce_axis(2), yl.axis(3)});
  yl.vectorize(yl.axis(3));
  s[cv.P].compute_at(y, nf);  // the padded input channel plane for this (n, f)
  tir::PrimFunc f = te::lower(s, {cv.X, cv.W, cv.Y}, "conv_tiled");
  const std::string text = tir::print_func(f);
  EXPECT_NE(text.find("allocate P: float32[1, 8, 16, 16]"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate Y.local: float32[1, 1, 1, 14]"), std::string::npos) << text;
  auto m = build_one(f);
  Tensor x = random_tensor({2, 8, 14, 14}, 33), w = random_tensor({16, 8, 3, 3}, 34), out(DType::f32, cv.Y.shape());
  run(*m, "conv_tiled", {&x, &w, &out});
  expect_close(out, reference_conv(x, w, 1, 1, cv.Y.shape()), 1e-4);
}
