// passes::simplify_arith computes a transposed convolution as one ordinary convolution of its
// stride phases, interleaved and cropped (conv_transpose_as_conv.h): with the reference
// executor's values, before and after the pass and natively (AVX-512 and AVX2 layouts), for the
// strides, kernels, paddings, output paddings and groups that upsampling layers use, with no
// bias, a constant one and a computed one. A
// transposed conv the pass cannot take (dilated) stays.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/reference/executor.h"
#include "compiled_vs_reference.h"
#include "ir/visitor.h"
#include "ir_count.h"
#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "passes/simplify_arith.h"
#include "topi_test_data.h"

namespace sy {
namespace {

struct Geometry {
  const char* what;
  int64_t C, O, H, W, KH, KW, groups;
  std::vector<int64_t> strides, padding, output_padding, dilation;
  int64_t conv_kh, conv_kw;  // the conv's kernel after the pass: ceil(K / s)
};

enum class Bias { none, constant, input };

// With Bias::input the bias is the function's second parameter (computed, not foldable).
ir::Module transposed_module(const Geometry& g, Bias bias) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, g.C, g.H, g.W}, DType::f32));
  std::vector<ir::Expr> params = {x};
  auto a = std::make_shared<ops::ConvTranspose2dAttrs>();
  a->strides = g.strides;
  a->padding = g.padding;
  a->output_padding = g.output_padding;
  a->dilation = g.dilation;
  a->groups = g.groups;
  std::vector<ir::Expr> args = {
      x, ir::constant(topitest::random(DType::f32, {g.C, g.O / g.groups, g.KH, g.KW}, -1, 1, 7))};
  if (bias == Bias::constant) args.push_back(ir::constant(topitest::random(DType::f32, {g.O}, -1, 1, 8)));
  if (bias == Bias::input) {
    params.push_back(ir::var("b", ir::tensor_type({g.O}, DType::f32)));
    args.push_back(params.back());
  }
  ir::Module m;
  m.functions["main"] = ir::function(params, ir::call(ops::OpCode::Relu, {ir::call(ops::OpCode::ConvTranspose2d, args, a)}));
  return m;
}

using irtest::count_op;

const ir::CallNode* conv_of(const ir::Module& m) {
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c->op == ops::OpCode::Conv2d) return c;
  return nullptr;
}

TEST(ConvTransposeAsConv, EveryStridePhaseMatchesTheReference) {
  const std::vector<Geometry> cases = {
      // U-Net's upsampling: 2x2 stride 2, one tap per phase (a 1x1 conv).
      {"2x2 s2", 32, 16, 8, 8, 2, 2, 1, {2, 2}, {0, 0, 0, 0}, {0, 0}, {1, 1}, 1, 1},
      // DCGAN's generator: 4x4 stride 2 padding 1.
      {"4x4 s2 p1", 16, 8, 5, 6, 4, 4, 1, {2, 2}, {1, 1, 1, 1}, {0, 0}, {1, 1}, 2, 2},
      // A decoder's 3x3 stride 2 padding 1 with output padding 1 (doubles the plane): the phases
      // lack a tap (16 computed for 9).
      {"3x3 s2 p1 op1", 8, 8, 7, 7, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 2, 2},
      // Output padding past every tap: one more input row and column of zeros.
      {"2x2 s2 op1", 4, 4, 5, 5, 2, 2, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, {1, 1}, 1, 1},
      // Stride 1: the conv with the kernel flipped and padding K - 1 - p.
      {"3x3 s1 p1", 8, 12, 6, 6, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {0, 0}, {1, 1}, 3, 3},
      // Unequal strides and kernels, padding on one side, a 1-row plane.
      {"3x2 s(3,1)", 6, 4, 1, 9, 3, 2, 1, {3, 1}, {0, 1, 2, 0}, {0, 0}, {1, 1}, 1, 2},
      {"5x3 s(2,3) p2", 6, 4, 4, 5, 5, 3, 1, {2, 3}, {2, 1, 0, 1}, {1, 2}, {1, 1}, 3, 1},
      // Grouped and depthwise.
      {"groups 2", 8, 6, 6, 6, 3, 3, 2, {2, 2}, {1, 1, 1, 1}, {0, 0}, {1, 1}, 2, 2},
      {"depthwise", 8, 8, 6, 6, 4, 4, 8, {2, 2}, {1, 1, 1, 1}, {0, 0}, {1, 1}, 2, 2},
  };
  for (const Geometry& g : cases)
    for (Bias bias : {Bias::none, Bias::constant, Bias::input}) {
      SCOPED_TRACE(std::string(g.what) + (bias == Bias::none ? "" : bias == Bias::constant ? ", bias" : ", bias input"));
      const ir::Module m = transposed_module(g, bias);
      const ir::Module s = passes::simplify_arith(m);
      EXPECT_EQ(count_op(s, ops::OpCode::ConvTranspose2d), 0);
      const ir::CallNode* conv = conv_of(s);
      ASSERT_NE(conv, nullptr);
      const Shape& w = ir::as_tensor(conv->args[1]->type).shape;
      EXPECT_EQ(w[0], g.O * g.strides[0] * g.strides[1]);
      EXPECT_EQ(w[2], g.conv_kh);
      EXPECT_EQ(w[3], g.conv_kw);
      std::vector<Tensor> x = {topitest::random(DType::f32, {1, g.C, g.H, g.W}, -1, 1, 9)};
      if (bias == Bias::input) x.push_back(topitest::random(DType::f32, {g.O}, -1, 1, 10));
      auto want = reference::run_module(m, x, {});
      auto got = reference::run_module(s, x, {});
      ASSERT_TRUE(want.is_ok() && got.is_ok());
      ASSERT_EQ((*want)[0].shape(), (*got)[0].shape());
      for (int64_t i = 0; i < (*want)[0].numel(); ++i) {
        const float v = (*want)[0].data<float>()[i];
        ASSERT_NEAR((*got)[0].data<float>()[i], v, 1e-5f * (1 + std::abs(v))) << i;
      }
      for (const target::Target& t : nativetest::host_and_avx2_targets()) {
        native::CompileOptions o;
        o.target = t;
        native::Compiled nc = native::compile_native(m, o);
        nativetest::expect_reference_values(m, nc, x, t.str());
      }
    }
}

TEST(ConvTransposeAsConv, ADilatedOneStays) {
  const Geometry g{"dilated", 4, 4, 5, 5, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {0, 0}, {2, 2}, 0, 0};
  const ir::Module m = transposed_module(g, Bias::constant);
  const ir::Module s = passes::simplify_arith(m);
  EXPECT_EQ(count_op(s, ops::OpCode::ConvTranspose2d), 1);
  EXPECT_EQ(count_op(s, ops::OpCode::Conv2d), 0);
  native::Compiled nc = native::compile_native(m, native::CompileOptions{});
  nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, g.C, g.H, g.W}, -1, 1, 9)}, "dilated");
}

}  // namespace
}  // namespace sy
