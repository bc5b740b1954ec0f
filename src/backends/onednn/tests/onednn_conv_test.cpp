// Convolution composites: bias, every fused activation, residual add as a sum post-op (in place and
// copied), broadcast add as a binary post-op, groups, depthwise, strides, dilation, padding.
#include "ops/op.h"
#include "test_util.h"

namespace sy::onednn_test {
namespace {

ops::Conv2dAttrs conv_attrs(std::vector<int64_t> pad = {1, 1, 1, 1}, std::vector<int64_t> strides = {1, 1},
                            int64_t groups = 1, std::vector<int64_t> dilation = {1, 1}) {
  ops::Conv2dAttrs a;
  a.padding = std::move(pad);
  a.strides = std::move(strides);
  a.groups = groups;
  a.dilation = std::move(dilation);
  return a;
}

// conv2d(x, w, b) with activation `act` applied (if not kCount), as a composite.
ir::Expr conv_act(const ir::Expr& x, int64_t oc, int64_t k, ops::Conv2dAttrs a, OpCode act, uint64_t seed,
                  ir::AttrsPtr act_attrs = nullptr) {
  const int64_t ic = ir::shape_of(x)[1];
  ir::Expr w = cst({oc, ic / a.groups, k, k}, seed, -0.3f, 0.3f);
  ir::Expr b = cst({oc}, seed + 1, -0.1f, 0.1f);
  return composite(act == OpCode::kCount ? "onednn.conv2d" : "onednn.conv2d_act", {x, w, b},
                   [&](const std::vector<ir::Expr>& p) {
                     ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1], p[2]}, a);
                     return act == OpCode::kCount ? c : ir::call(act, {c}, act_attrs);
                   });
}

TEST(OnednnConv, BiasRelu) {
  ir::Expr x = input("x", {1, 3, 16, 16});
  ir::Expr fn = region({x}, conv_act(x, 8, 3, conv_attrs(), OpCode::Relu, 10));
  expect_matches_reference(fn, {random({1, 3, 16, 16}, 1)}, 1e-5);
}

TEST(OnednnConv, EveryActivation) {
  struct Case {
    OpCode op;
    ir::AttrsPtr attrs;
    double tol;
  };
  auto clip = std::make_shared<ops::ClipAttrs>();
  clip->min = 0;
  clip->max = 6;
  auto clip_asym = std::make_shared<ops::ClipAttrs>();
  clip_asym->min = -0.25;
  clip_asym->max = 0.5;
  auto leaky = std::make_shared<ops::AlphaAttrs>();
  leaky->alpha = 0.1;
  auto elu = std::make_shared<ops::AlphaAttrs>();
  elu->alpha = 0.7;
  auto gelu_tanh = std::make_shared<ops::GeluAttrs>();
  gelu_tanh->approximate = "tanh";
  std::vector<Case> cases = {
      {OpCode::Relu, nullptr, 1e-5},        {OpCode::Clip, clip, 1e-5},
      {OpCode::Clip, clip_asym, 1e-5},      {OpCode::Sigmoid, nullptr, 1e-5},
      {OpCode::Tanh, nullptr, 1e-5},        {OpCode::HardSwish, nullptr, 1e-5},
      {OpCode::Gelu, nullptr, 1e-5},        {OpCode::Gelu, gelu_tanh, 1e-5},
      {OpCode::LeakyRelu, leaky, 1e-5},     {OpCode::Elu, elu, 1e-5},
      {OpCode::Selu, nullptr, 1e-5},        {OpCode::Softplus, nullptr, 1e-5},
      {OpCode::Mish, nullptr, 1e-5},        {OpCode::HardSigmoid, nullptr, 1e-5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ops::op_name(c.op));
    ir::Expr x = input("x", {1, 16, 9, 9});
    ir::AttrsPtr attrs = c.attrs ? c.attrs : ops::op_def(c.op).make_attrs();
    ir::Expr fn = region({x}, conv_act(x, 32, 3, conv_attrs(), c.op, 20, attrs));
    expect_matches_reference(fn, {random({1, 16, 9, 9}, 2, -2.f, 2.f)}, c.tol);
  }
}

TEST(OnednnConv, GroupsDepthwiseStridesDilationPadding) {
  struct Case {
    int64_t ic, oc, k;
    ops::Conv2dAttrs a;
  };
  std::vector<Case> cases = {
      {32, 32, 3, conv_attrs({1, 1, 1, 1}, {1, 1}, 32)},   // depthwise
      {32, 32, 3, conv_attrs({1, 1, 1, 1}, {2, 2}, 32)},   // depthwise, stride 2
      {12, 24, 3, conv_attrs({1, 1, 1, 1}, {1, 1}, 3)},    // grouped, 4 channels per group
      {8, 16, 3, conv_attrs({2, 2, 2, 2}, {1, 1}, 1, {2, 2})},  // dilated
      {8, 16, 5, conv_attrs({0, 1, 2, 3}, {2, 1})},        // asymmetric padding, strides
      {3, 64, 7, conv_attrs({3, 3, 3, 3}, {2, 2})},        // the ImageNet stem
      {64, 128, 1, conv_attrs({0, 0, 0, 0}, {2, 2})},      // strided 1x1
  };
  uint64_t seed = 30;
  for (const Case& c : cases) {
    SCOPED_TRACE("ic=" + std::to_string(c.ic) + " oc=" + std::to_string(c.oc) + " k=" + std::to_string(c.k) +
                 " groups=" + std::to_string(c.a.groups));
    ir::Expr x = input("x", {1, c.ic, 15, 14});
    ir::Expr fn = region({x}, conv_act(x, c.oc, c.k, c.a, OpCode::Relu, seed++));
    expect_matches_reference(fn, {random({1, c.ic, 15, 14}, seed++)}, 1e-5);
  }
}

// A ResNet basic block: conv-relu, conv + residual + relu (sum post-op writing into the residual's
// buffer), stacked twice, then a block whose residual is still used afterwards (copied, not
// overwritten).
TEST(OnednnConv, ResidualAddAsSumPostOp) {
  ir::Expr x = input("x", {1, 32, 12, 12});
  auto block = [&](const ir::Expr& in, uint64_t seed, const std::string& name, bool relu) {
    ir::Expr h = conv_act(in, 32, 3, conv_attrs(), OpCode::Relu, seed);
    ir::Expr w = cst({32, 32, 3, 3}, seed + 2, -0.1f, 0.1f);
    ir::Expr b = cst({32}, seed + 3, -0.1f, 0.1f);
    return composite(name, {h, w, b, in}, [&](const std::vector<ir::Expr>& p) {
      ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1], p[2]}, conv_attrs());
      ir::Expr s = ir::call(OpCode::Add, {c, p[3]});  // conv first
      return relu ? ir::call(OpCode::Relu, {s}) : s;
    });
  };
  ir::Expr y1 = block(x, 40, "onednn.conv2d_add_act", true);
  ir::Expr y2 = block(y1, 50, "onednn.conv2d_add", false);
  // y2 is used by the next block's add AND by a final add: the residual must be copied.
  ir::Expr y3 = block(y2, 60, "onednn.conv2d_add_act", true);
  ir::Expr out = ir::call(OpCode::Add, {y3, y2});
  ir::Expr fn = region({x}, out);
  expect_matches_reference(fn, {random({1, 32, 12, 12}, 3)}, 1e-5);

  omp_set_num_threads(2);
  backends::onednn::OnednnModule mod({{"onednn_0", fn}});
  const auto& st = mod.stats("onednn_0");
  EXPECT_GE(st.fused_post_ops, 3 + 3 + 2);  // 3 conv-relu; 3 sums; 2 relus after sums
  // Only the region boundary (and the one residual copy) reorders; every conv stays blocked.
  EXPECT_LE(st.reorders, 3);
}

// The residual as the FIRST operand of the add, and a per-channel constant add (binary post-op).
TEST(OnednnConv, AddOperandOrderAndBroadcastConstant) {
  ir::Expr x = input("x", {1, 16, 8, 8});
  ir::Expr r = input("r", {1, 16, 8, 8});
  ir::Expr w = cst({16, 16, 1, 1}, 70);
  ir::Expr y = composite("onednn.conv2d_add_act", {x, w, r}, [&](const std::vector<ir::Expr>& p) {
    ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1]}, conv_attrs({0, 0, 0, 0}));
    return ir::call(OpCode::Relu, {ir::call(OpCode::Add, {p[2], c})});
  });
  ir::Expr chan = cst({16, 1, 1}, 71);
  ir::Expr w2 = cst({16, 16, 3, 3}, 72, -0.2f, 0.2f);
  ir::Expr z = composite("onednn.conv2d_add", {y, w2, chan}, [&](const std::vector<ir::Expr>& p) {
    ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1]}, conv_attrs());
    return ir::call(OpCode::Add, {c, p[2]});
  });
  ir::Expr fn = region({x, r}, z);
  expect_matches_reference(fn, {random({1, 16, 8, 8}, 4), random({1, 16, 8, 8}, 5)}, 1e-5);
}

// A composite whose body is not anchor + chain is lowered op by op, still correct.
TEST(OnednnConv, CompositeOfAnotherShapeRunsOpByOp) {
  ir::Expr x = input("x", {1, 8, 6, 6});
  ir::Expr w = cst({8, 8, 3, 3}, 80, -0.2f, 0.2f);
  ir::Expr y = composite("onednn.custom", {x, w}, [&](const std::vector<ir::Expr>& p) {
    ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1]}, conv_attrs());
    ir::Expr r = ir::call(OpCode::Relu, {p[0]});
    return ir::call(OpCode::Mul, {ir::call(OpCode::Add, {c, r}), r});  // p0 used twice inside
  });
  ir::Expr fn = region({x}, ir::call(OpCode::Sub, {y, x}));
  expect_matches_reference(fn, {random({1, 8, 6, 6}, 6)}, 1e-5);
}

// SiLU after a conv (EfficientNet's activation), written x * sigmoid(x) and sigmoid(x) * x: one
// swish post-op each, no separate eltwise or binary primitive; values as the reference's.
TEST(OnednnConv, SiluIsOneSwishPostOp) {
  ir::Expr x = input("x", {1, 16, 10, 10});
  auto conv_silu = [&](const ir::Expr& in, uint64_t seed, bool sigmoid_first) {
    ir::Expr w = cst({16, 16, 3, 3}, seed, -0.2f, 0.2f);
    ir::Expr b = cst({16}, seed + 1, -0.1f, 0.1f);
    return composite("onednn.conv2d_act", {in, w, b}, [&](const std::vector<ir::Expr>& p) {
      ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1], p[2]}, conv_attrs());
      ir::Expr s = ir::call(OpCode::Sigmoid, {c});
      return sigmoid_first ? ir::call(OpCode::Mul, {s, c}) : ir::call(OpCode::Mul, {c, s});
    });
  };
  ir::Expr fn = region({x}, conv_silu(conv_silu(x, 70, false), 80, true));
  expect_matches_reference(fn, {random({1, 16, 10, 10}, 4, -3.f, 3.f)}, 1e-5);
  omp_set_num_threads(2);
  backends::onednn::OnednnModule mod({{"onednn_0", fn}});
  const auto& st = mod.stats("onednn_0");
  EXPECT_EQ(st.fused_post_ops, 2);
  // Two convolutions and the region's boundary reorders in and out (unfused: 2 more per SiLU).
  EXPECT_EQ(st.kernels.size(), 4u);
}

}  // namespace
}  // namespace sy::onednn_test
