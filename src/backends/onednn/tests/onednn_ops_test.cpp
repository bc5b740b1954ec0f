// Single ops the backend takes outside composites: pooling, batch-norm, softmax, layer-norm,
// eltwise, binary with broadcasting, concat, reshape, transpose, no-op pads.
#include "test_util.h"

#include "ir/visitor.h"
#include "ops/op.h"

namespace sy::onednn_test {
namespace {

ops::Pool2dAttrs pool_attrs(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> pad, bool ceil = false,
                            bool include_pad = false) {
  ops::Pool2dAttrs a;
  a.kernel = std::move(k);
  a.strides = std::move(s);
  a.padding = std::move(pad);
  a.ceil_mode = ceil;
  a.count_include_pad = include_pad;
  return a;
}

TEST(OnednnOps, Pooling) {
  struct Case {
    OpCode op;
    ops::Pool2dAttrs a;
  };
  std::vector<Case> cases = {
      {OpCode::MaxPool2d, pool_attrs({3, 3}, {2, 2}, {1, 1, 1, 1})},
      {OpCode::MaxPool2d, pool_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, true)},
      {OpCode::AvgPool2d, pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})},
      {OpCode::AvgPool2d, pool_attrs({3, 3}, {1, 1}, {1, 1, 1, 1}, false, true)},
      {OpCode::AvgPool2d, pool_attrs({3, 3}, {2, 2}, {1, 1, 1, 1}, true, false)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ops::op_name(c.op) + " " + ir::attrs_str(c.a));
    ir::Expr x = input("x", {1, 16, 11, 11});
    // After a conv so that the input is blocked.
    ir::Expr w = cst({16, 16, 1, 1}, 200);
    ir::Expr cv = ir::call(OpCode::Conv2d, {x, w}, ops::Conv2dAttrs{});
    ir::Expr fn = region({x}, ir::call(c.op, {cv}, c.a));
    expect_matches_reference(fn, {random({1, 16, 11, 11}, 14)}, 1e-5);
  }
  for (OpCode op : {OpCode::GlobalAvgPool2d, OpCode::GlobalMaxPool2d}) {
    ir::Expr x = input("x", {2, 24, 7, 5});
    expect_matches_reference(region({x}, ir::call(op, {x})), {random({2, 24, 7, 5}, 15)}, 1e-5);
  }
}

TEST(OnednnOps, BatchNormWithAndWithoutRelu) {
  ir::Expr x = input("x", {1, 24, 6, 6});
  auto bn_args = [](const ir::Expr& in, uint64_t seed) {
    return std::vector<ir::Expr>{in, cst({24}, seed, 0.5f, 1.5f), cst({24}, seed + 1), cst({24}, seed + 2),
                                 cst({24}, seed + 3, 0.5f, 2.f)};
  };
  ops::BatchNormAttrs a;
  a.epsilon = 1e-3;
  ir::Expr y = composite("onednn.batch_norm_act", bn_args(x, 210), [&](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Relu, {ir::call(OpCode::BatchNorm, p, a)});
  });
  ir::Expr z = ir::call(OpCode::BatchNorm, bn_args(y, 220), a);  // plain op
  expect_matches_reference(region({x}, z), {random({1, 24, 6, 6}, 16, -2.f, 2.f)}, 1e-5);
  ir::Expr x2 = input("x", {5, 24});
  expect_matches_reference(region({x2}, ir::call(OpCode::BatchNorm, bn_args(x2, 230), a)), {random({5, 24}, 17)}, 1e-5);
}

TEST(OnednnOps, SoftmaxAndLayerNorm) {
  for (int64_t axis : {1, 2}) {
    for (OpCode op : {OpCode::Softmax, OpCode::LogSoftmax}) {
      ir::Expr x = input("x", {2, 6, 10});
      ops::AxisAttrs a;
      a.axis = axis;
      expect_matches_reference(region({x}, ir::call(op, {x}, a)), {random({2, 6, 10}, 18, -3.f, 3.f)}, 1e-5);
    }
  }
  for (int64_t axis : {2, 1}) {
    ir::Expr x = input("x", {2, 6, 10});
    ops::LayerNormAttrs a;
    a.axis = axis;
    a.epsilon = 1e-5;
    Shape ps(axis == 2 ? Shape{10} : Shape{6, 10});
    ir::Expr ln = ir::call(OpCode::LayerNorm, {x, cst(ps, 240, 0.5f, 1.5f), cst(ps, 241)}, a);
    expect_matches_reference(region({x}, ln), {random({2, 6, 10}, 19, -3.f, 3.f)}, 1e-5);
  }
}

TEST(OnednnOps, EveryEltwiseOp) {
  for (OpCode op : {OpCode::Relu, OpCode::Tanh, OpCode::Sigmoid, OpCode::Exp, OpCode::Abs, OpCode::Neg, OpCode::Round,
                    OpCode::Softplus, OpCode::Mish, OpCode::HardSwish, OpCode::HardSigmoid, OpCode::Gelu,
                    OpCode::LeakyRelu, OpCode::Elu, OpCode::Selu, OpCode::Clip}) {
    SCOPED_TRACE(ops::op_name(op));
    ir::Expr x = input("x", {3, 17});
    expect_matches_reference(region({x}, ir::call(op, {x}, ops::op_def(op).make_attrs())),
                             {random({3, 17}, 20, -3.f, 3.f)}, 1e-5);
  }
  for (OpCode op : {OpCode::Log, OpCode::Sqrt, OpCode::Reciprocal}) {  // positive inputs
    SCOPED_TRACE(ops::op_name(op));
    ir::Expr x = input("x", {3, 17});
    expect_matches_reference(region({x}, ir::call(op, {x})), {random({3, 17}, 21, 0.1f, 3.f)}, 1e-5);
  }
}

TEST(OnednnOps, BinaryWithBroadcasting) {
  for (OpCode op : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div, OpCode::Maximum, OpCode::Minimum}) {
    SCOPED_TRACE(ops::op_name(op));
    ir::Expr a = input("a", {2, 8, 5, 5});
    ir::Expr b = input("b", {8, 1, 5});
    ir::Expr c = cst({2, 8, 5, 5}, 250, 0.5f, 1.5f);
    // full op broadcast; full op full (constant); commutative ops also broadcast op full
    ir::Expr y = ir::call(op, {ir::call(op, {a, b}), c});
    if (op == OpCode::Add || op == OpCode::Mul || op == OpCode::Maximum || op == OpCode::Minimum)
      y = ir::call(op, {b, y});
    expect_matches_reference(region({a, b}, y), {random({2, 8, 5, 5}, 22, 0.5f, 2.f), random({8, 1, 5}, 23, 0.5f, 2.f)},
                             1e-5);
  }
}

// cv * sigmoid(global_avg_pool(cv)), a squeeze-excitation scale; every op of it is claimed.
ir::Expr claimed_squeeze_excitation(const ir::Expr& cv) {
  ir::Expr se = ir::call(OpCode::Sigmoid, {ir::call(OpCode::GlobalAvgPool2d, {cv})});
  ir::Expr mul = ir::call(OpCode::Mul, {cv, se});
  for (const ir::Expr& e : ir::post_order(mul))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op()) {
      backends::Verdict v = backend().supports_op(*c);
      EXPECT_TRUE(v.ok) << v.reason;
    }
  return mul;
}

// A broadcast binary op is claimed only when its primitive has a JIT kernel in every layout its
// first operand can have (plain, a conv's channel blocks): a squeeze-excitation scale (1xCx1x1)
// after a conv is claimed and runs no reference kernel (oneDNN 2.6 on AVX2 ran it with its
// reference loop while the scale was plain); a broadcast over the last axis only (1xCxHx1) runs
// the reference loop in plain layout and is declined, with the reason.
TEST(OnednnOps, BroadcastsOnReferenceKernelsAreDeclined) {
  ir::Expr x = input("x", {1, 24, 14, 14});
  ir::Expr cv = ir::call(OpCode::Conv2d, {x, cst({24, 24, 1, 1}, 300)}, ops::Conv2dAttrs{});
  ir::Expr mul = claimed_squeeze_excitation(cv);
  ir::Expr fn = region({x}, mul);
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  auto* m = dynamic_cast<backends::onednn::OnednnModule*>(mod.get());
  ASSERT_NE(m, nullptr);
  std::vector<Tensor> got = m->run("onednn_0", {random({1, 24, 14, 14}, 31)});
  EXPECT_LT(rel_err(got[0], run_reference(fn, {random({1, 24, 14, 14}, 31)})[0]), 1e-5);
  EXPECT_TRUE(m->stats("onednn_0").reference_kernels.empty()) << m->stats("onednn_0").reference_kernels[0];

  ir::Expr rows = ir::call(OpCode::Mul, {x, input("r", {1, 24, 14, 1})});
  backends::Verdict v = backend().supports_op(*rows->as<ir::CallNode>());
  if (v.ok) {  // a oneDNN with a JIT kernel for it: then it must run it
    ir::Expr f2 = region({x, rows->as<ir::CallNode>()->args[1]}, rows);
    auto mod2 = backend().compile({{"onednn_0", f2}}, target::host());
    auto* m2 = dynamic_cast<backends::onednn::OnednnModule*>(mod2.get());
    m2->run("onednn_0", {random({1, 24, 14, 14}, 32), random({1, 24, 14, 1}, 33)});
    EXPECT_TRUE(m2->stats("onednn_0").reference_kernels.empty());
  } else {
    EXPECT_EQ(v.reason, "onednn multiply: broadcast 1x24x14x1 on plain runs oneDNN's reference kernel");
  }
}

// Compiles the region fn alone and runs it on in: the reference's values (1e-5) and no primitive
// on oneDNN's reference kernel. Returns the plan's counts.
backends::onednn::PlanStats expect_reference_values_on_jit_kernels(const ir::Expr& fn, const std::vector<Tensor>& in) {
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  auto* m = dynamic_cast<backends::onednn::OnednnModule*>(mod.get());
  EXPECT_NE(m, nullptr);
  if (!m) return {};
  EXPECT_LT(rel_err(m->run("onednn_0", in)[0], run_reference(fn, in)[0]), 1e-5);
  const backends::onednn::PlanStats st = m->stats("onednn_0");
  EXPECT_TRUE(st.reference_kernels.empty()) << st.reference_kernels[0];
  return st;
}

// An unrolled bidirectional LSTM's output: each step's two directions concatenated (oneDNN lays
// the 1x2x1x8 result out as "bacd"), then the steps along the first axis. oneDNN 2.6 has only its
// reference concat for sources in that layout; plain ones take its simple one.
TEST(OnednnOps, AConcatOfConcatenationsRunsNoReferenceKernel) {
  std::vector<ir::Expr> params, steps;
  std::vector<Tensor> in;
  ops::AxisAttrs dirs, seq;
  dirs.axis = 1;
  seq.axis = 0;
  for (int t = 0; t < 6; ++t) {
    ir::Expr f = input("f" + std::to_string(t), {1, 1, 1, 8}), b = input("b" + std::to_string(t), {1, 1, 1, 8});
    params.insert(params.end(), {f, b});
    in.push_back(random({1, 1, 1, 8}, 340 + 2 * t));
    in.push_back(random({1, 1, 1, 8}, 341 + 2 * t));
    steps.push_back(ir::call(OpCode::Concat, {ir::call(OpCode::Tanh, {f}), ir::call(OpCode::Tanh, {b})}, dirs));
  }
  expect_reference_values_on_jit_kernels(region(params, ir::call(OpCode::Concat, steps, seq)), in);
}

// RegNet-Y's squeeze-excitation: grouped convolutions of 8-channel groups choose channel blocks of
// 8 even with AVX-512, where oneDNN 2.6 has no JIT kernel for a per-channel multiply (39 of the
// model's 45 ms ran in its reference loop). The multiply is claimed and runs a JIT kernel on
// another layout of the same values.
TEST(OnednnOps, ASqueezeExcitationAfterAGroupedConvRunsNoReferenceKernel) {
  ir::Expr x = input("x", {1, 48, 14, 14});
  ops::Conv2dAttrs grouped;
  grouped.groups = 6;
  grouped.padding = {1, 1, 1, 1};
  ir::Expr cv = ir::call(OpCode::Conv2d, {x, cst({48, 8, 3, 3}, 302, -0.2f, 0.2f)}, grouped);
  ir::Expr fn = region({x}, ir::call(OpCode::Relu, {claimed_squeeze_excitation(cv)}));
  const std::vector<Tensor> in = {random({1, 48, 14, 14}, 34)};
  expect_reference_values_on_jit_kernels(fn, in);
}

// Every broadcast a conv's result may meet (per image and channel, per channel, a scalar, over
// the rows, on a batch of 2): claimed ones give the reference's values (diff seed 193 on AVX2: a
// scalar added to a 2-image batch in the conv's blocked layout was skipped) and run no reference
// kernel. Registered again with oneDNN capped to AVX2 (onednn.broadcasts_avx2).
TEST(OnednnOps, BroadcastsAfterAConvMatchTheReference) {
  for (int64_t C : {24, 1})
  for (Shape b : std::vector<Shape>{{2, C, 1, 1}, {1, C, 1, 1}, {C, 1, 1}, {1, 1, 1, 1}, {1}, {1, 1, 7, 7}, {2, 1, 1, 1}}) {
    for (OpCode op : {OpCode::Add, OpCode::Mul}) {
      SCOPED_TRACE(ops::op_name(op) + " of " + std::to_string(C) + " channels by " + shape_str(b));
      ir::Expr x = input("x", {2, 24, 7, 7});
      ir::Expr s = input("s", b);
      ir::Expr cv = ir::call(OpCode::Conv2d, {x, cst({C, 24, 1, 1}, 301)}, ops::Conv2dAttrs{});
      ir::Expr y = ir::call(op, {cv, s});
      backends::Verdict v = backend().supports_op(*y->as<ir::CallNode>());
      if (!v.ok) {
        EXPECT_NE(v.reason.find("reference kernel"), std::string::npos) << v.reason;
        continue;
      }
      ir::Expr fn = region({x, s}, ir::call(OpCode::Relu, {y}));
      std::vector<Tensor> in = {random({2, 24, 7, 7}, 41), random(b, 42)};
      expect_reference_values_on_jit_kernels(fn, in);
    }
  }
}

// A squeeze-excitation scale read only by a convolution is taken into its weights (w * s along the
// input channels, each run) instead of a pass over the activations: with padding, a stride, a
// bias and a residual, and s on either side of the multiply. Not where the scale differs per image,
// the scaled activations are read again, the convolution is grouped, or its weights outweigh a
// quarter of the activations; the values are the reference's in every case.
TEST(OnednnOps, ASqueezeExcitationScaleIsTakenIntoTheNextConvWeights) {
  struct Case {
    std::string what;
    int64_t n, cout, k, groups;
    bool scale_first, per_image, read_again;
    int scaled;
  };
  for (const Case& t : std::vector<Case>{{"3x3, stride 2, bias, residual", 1, 24, 3, 1, false, false, false, 1},
                                         {"1x1, scale first, batch of 2", 2, 8, 1, 1, true, false, false, 1},
                                         {"a scale per image", 2, 8, 1, 1, false, true, false, 0},
                                         {"scaled activations read again", 1, 8, 1, 1, false, false, true, 0},
                                         {"grouped", 1, 24, 3, 3, false, false, false, 0},
                                         {"weights larger than a quarter", 1, 96, 3, 1, false, false, false, 0}}) {
    SCOPED_TRACE(t.what);
    const Shape xs{t.n, 24, 32, 32};
    ir::Expr x = input("x", xs);
    ir::Expr s = input("s", {t.per_image ? t.n : 1, 24, 1, 1});
    ir::Expr mul = t.scale_first ? ir::call(OpCode::Mul, {s, ir::call(OpCode::Relu, {x})})
                                 : ir::call(OpCode::Mul, {ir::call(OpCode::Relu, {x}), s});
    ops::Conv2dAttrs a;
    a.groups = t.groups;
    a.padding = {t.k / 2, t.k / 2, t.k / 2, t.k / 2};
    const bool residual = t.cout == 24 && t.groups == 1;
    if (!residual) a.strides = {2, 2};
    std::vector<ir::Expr> args = {mul, cst({t.cout, 24 / t.groups, t.k, t.k}, 350, -0.2f, 0.2f), cst({t.cout}, 351)};
    if (residual) args.push_back(x);
    ir::Expr y = composite(residual ? "onednn.conv2d_add" : "onednn.conv2d", args, [&](const std::vector<ir::Expr>& p) {
      ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1], p[2]}, a);
      return residual ? ir::call(OpCode::Add, {c, p[3]}) : c;
    });
    if (t.read_again) y = ir::tuple({y, mul});
    const std::vector<Tensor> in = {random(xs, 352), random({t.per_image ? t.n : 1, 24, 1, 1}, 353, 0.f, 1.f)};
    auto mod = backend().compile({{"onednn_0", region({x, s}, y)}}, target::host());
    auto* m = dynamic_cast<backends::onednn::OnednnModule*>(mod.get());
    ASSERT_NE(m, nullptr);
    const std::vector<Tensor> got = m->run("onednn_0", in), want = run_reference(region({x, s}, y), in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_LT(rel_err(got[i], want[i]), 1e-5) << "output " << i;
    const backends::onednn::PlanStats st = m->stats("onednn_0");
    EXPECT_EQ(st.scaled_weights, t.scaled);
    EXPECT_TRUE(st.reference_kernels.empty()) << st.reference_kernels[0];
  }
}

// A broadcast binary on channel blocks that pad the channels (1 or 3 of 16, 8 with AVX2): oneDNN
// 2.6's jit:uni binary run in place leaves its source unchanged there, so the backend gives it a
// destination of its own. Seed 52047 of the differential suite: a 5-d concatenation (laid out
// with the channel outermost, moved to channel blocks for the scalar add) + 1.1 came out as the
// concatenation. Also an image-like conv of 3 channels scaled and shifted by scalars.
TEST(OnednnOps, BroadcastBinaryOnPaddedChannelBlocks) {
  ops::AxisAttrs depth;
  depth.axis = 2;
  ir::Expr x = input("x", {1, 1, 1, 15, 7});
  ir::Expr cat = ir::call(OpCode::Concat, {x, x}, depth);
  expect_matches_reference(region({x}, ir::call(OpCode::Add, {cat, cst({}, 330)})), {random({1, 1, 1, 15, 7}, 331)},
                           1e-6);
  for (int64_t C : {1, 3}) {
    SCOPED_TRACE(std::to_string(C) + " channels");
    ir::Expr img = input("img", {1, 24, 8, 8});
    ops::Conv2dAttrs pad1;
    pad1.padding = {1, 1, 1, 1};
    ir::Expr cv = ir::call(OpCode::Conv2d, {img, cst({C, 24, 3, 3}, 332, -0.2f, 0.2f)}, pad1);
    ir::Expr y = ir::call(OpCode::Add, {ir::call(OpCode::Mul, {ir::call(OpCode::Tanh, {cv}), cst({}, 333)}), cst({1}, 334)});
    expect_matches_reference(region({img}, y), {random({1, 24, 8, 8}, 335)}, 1e-5);
  }
}

// A binary post-op with which oneDNN 2.6 has only its reference kernel for the primitive: a conv's
// result plus a table over the plane (a positional embedding), or a constant of the whole shape
// (not a residual: no sum post-op); a matmul's result plus one value per row. Fused, the conv ran
// 290x slower (64 channels on 56x56: 209 ms against 0.73); the binary runs as a step of its own.
// Registered again with oneDNN capped to AVX2 (onednn.broadcasts_avx2).
TEST(OnednnOps, BroadcastPostOpsThatTakeAReferenceKernelRunAsSteps) {
  int left = 0;
  for (Shape b : std::vector<Shape>{{1, 1, 10, 10}, {10, 10}, {10}, {1, 1, 1, 10}, {1, 24, 10, 10}}) {
    for (OpCode op : {OpCode::Add, OpCode::Mul}) {
      SCOPED_TRACE("conv2d " + ops::op_name(op) + " " + shape_str(b));
      ir::Expr x = input("x", {1, 24, 10, 10});
      ops::Conv2dAttrs pad1;
      pad1.padding = {1, 1, 1, 1};
      ir::Expr y = composite("onednn.conv2d_add_act", {x, cst({24, 24, 3, 3}, 310, -0.2f, 0.2f), cst(b, 311)},
                             [&](const std::vector<ir::Expr>& p) {
                               ir::Expr c = ir::call(OpCode::Conv2d, {p[0], p[1]}, pad1);
                               return ir::call(OpCode::Relu, {ir::call(op, {c, p[2]})});
                             });
      ir::Expr fn = region({x}, y);
      const std::vector<Tensor> in = {random({1, 24, 10, 10}, 43)};
      left += expect_reference_values_on_jit_kernels(fn, in).post_ops_left_for_reference;
    }
  }
  for (Shape b : std::vector<Shape>{{40, 1}, {24}}) {
    SCOPED_TRACE("matmul add " + shape_str(b));
    ir::Expr x = input("x", {40, 32});
    ir::Expr y = composite("onednn.matmul_add", {x, cst({32, 24}, 312, -0.2f, 0.2f), cst(b, 313)},
                           [&](const std::vector<ir::Expr>& p) {
                             return ir::call(OpCode::Add, {ir::call(OpCode::MatMul, {p[0], p[1]}), p[2]});
                           });
    ir::Expr fn = region({x}, y);
    const std::vector<Tensor> in = {random({40, 32}, 44)};
    left += expect_reference_values_on_jit_kernels(fn, in).post_ops_left_for_reference;
  }
  EXPECT_GT(left, 0) << "no case met a reference kernel: the test no longer tests the fallback";
}

TEST(OnednnOps, ConcatReshapeTransposePad) {
  ir::Expr x = input("x", {1, 16, 6, 6});
  ir::Expr w1 = cst({32, 16, 1, 1}, 260);
  ir::Expr w2 = cst({16, 16, 3, 3}, 261, -0.2f, 0.2f);
  ops::Conv2dAttrs pad1;
  pad1.padding = {1, 1, 1, 1};
  ir::Expr a = ir::call(OpCode::Conv2d, {x, w1}, ops::Conv2dAttrs{});  // blocked
  ir::Expr b = ir::call(OpCode::Conv2d, {x, w2}, pad1);                // blocked
  ops::AxisAttrs ax;
  ax.axis = 1;
  ir::Expr cat = ir::call(OpCode::Concat, {a, x, b}, ax);  // blocked + plain input
  ops::PadAttrs zero;
  zero.pads = std::vector<int64_t>(8, 0);
  ir::Expr p = ir::call(OpCode::Pad, {cat}, zero);
  ops::TransposeAttrs tr;
  tr.perm = {0, 2, 3, 1};
  ir::Expr t = ir::call(OpCode::Transpose, {p}, tr);
  ops::ReshapeAttrs rs;
  rs.newshape = {36, 64};
  ir::Expr r = ir::call(OpCode::Reshape, {t}, rs);
  ir::Expr one = ir::call(OpCode::Concat, {r}, ax);
  expect_matches_reference(region({x}, one), {random({1, 16, 6, 6}, 24)}, 1e-5);
}

// A region compiled and run at a thread count: its outputs, and its primitives' implementations
// (" a b ... ", each between spaces).
struct Ran {
  std::vector<Tensor> outs;
  std::string kernels = " ";
  // The convolutions ran oneDNN's brgemm kernels, which the backend gives NHWC.
  bool nhwc() const { return kernels.find(" brgconv") != std::string::npos; }
};
Ran compile_and_run(const ir::Expr& fn, const std::vector<Tensor>& in, int threads) {
  omp_set_num_threads(threads);
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  auto* m = dynamic_cast<backends::onednn::OnednnModule*>(mod.get());
  Ran r;
  if (!m) return r;
  r.outs = m->run("onednn_0", in);
  for (const std::string& k : m->stats("onednn_0").kernels) r.kernels += k + " ";
  return r;
}

// DenseNet's pattern: convolutions' results (NHWC where oneDNN has brgemm) concatenated along
// the channels, the concatenation read by a batch-norm, a convolution and the region's result.
// Channel counts that are not whole vectors, at 1 and 2 threads; where the convolutions ran in
// NHWC, the backend's own concatenation must have taken it (oneDNN's is slow there).
TEST(OnednnOps, ChannelConcatOfNhwcConvolutions) {
  ir::Expr x = input("x", {1, 16, 9, 11});
  ops::Conv2dAttrs pad1;
  pad1.padding = {1, 1, 1, 1};
  ir::Expr a = ir::call(OpCode::Conv2d, {x, cst({24, 16, 1, 1}, 270)}, ops::Conv2dAttrs{});
  ir::Expr b = ir::call(OpCode::Conv2d, {x, cst({5, 16, 3, 3}, 271, -0.2f, 0.2f)}, pad1);
  ir::Expr c = ir::call(OpCode::Relu, {ir::call(OpCode::Conv2d, {x, cst({32, 16, 1, 1}, 272)}, ops::Conv2dAttrs{})});
  ops::AxisAttrs ax;
  ax.axis = 1;
  ir::Expr cat = ir::call(OpCode::Concat, {a, b, c, a}, ax);  // 85 channels, one input twice
  ir::Expr y = ir::call(OpCode::Conv2d, {cat, cst({8, 85, 1, 1}, 273)}, ops::Conv2dAttrs{});
  ir::Expr fn = region({x}, ir::tuple({cat, y}));
  std::vector<Tensor> in = {random({1, 16, 9, 11}, 27)};
  std::vector<Tensor> want = run_reference(fn, in);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    Ran r = compile_and_run(fn, in, threads);
    ASSERT_EQ(r.outs.size(), 2u);
    EXPECT_LE(rel_err(r.outs[0], want[0]), 1e-5);
    EXPECT_LE(rel_err(r.outs[1], want[1]), 1e-5);
    EXPECT_EQ(r.kernels.find(" switchyard:nhwc_channel_concat ") != std::string::npos, r.nhwc()) << r.kernels;
  }
}

// DenseNet's layer: concat -> batch-norm + ReLU (a composite) -> conv, and a plain batch-norm of
// a second concat. Where the concat is our own (NHWC), it applies both batch-norms in its copy.
TEST(OnednnOps, BatchNormTakenByTheConcat) {
  ir::Expr x = input("x", {1, 16, 7, 9});
  ir::Expr a = ir::call(OpCode::Conv2d, {x, cst({32, 16, 1, 1}, 280)}, ops::Conv2dAttrs{});
  ir::Expr b = ir::call(OpCode::Conv2d, {x, cst({13, 16, 1, 1}, 281)}, ops::Conv2dAttrs{});
  ops::AxisAttrs ax;
  ax.axis = 1;
  auto bn_args = [](const ir::Expr& in, int64_t C, uint64_t seed) {
    return std::vector<ir::Expr>{in, cst({C}, seed, 0.5f, 1.5f), cst({C}, seed + 1), cst({C}, seed + 2),
                                 cst({C}, seed + 3, 0.5f, 2.f)};
  };
  ops::BatchNormAttrs bna;
  bna.epsilon = 1e-5;
  ir::Expr c = ir::call(OpCode::Conv2d, {x, cst({16, 16, 1, 1}, 283)}, ops::Conv2dAttrs{});
  ir::Expr cat1 = ir::call(OpCode::Concat, {c, a, b}, ax);  // 61 channels
  ir::Expr n1 = composite("onednn.batch_norm_act", bn_args(cat1, 61, 290), [&](const std::vector<ir::Expr>& p) {
    return ir::call(OpCode::Relu, {ir::call(OpCode::BatchNorm, p, bna)});
  });
  ir::Expr y = ir::call(OpCode::Conv2d, {n1, cst({8, 61, 1, 1}, 282)}, ops::Conv2dAttrs{});
  ir::Expr cat2 = ir::call(OpCode::Concat, {a, y}, ax);  // 40 channels
  ir::Expr z = ir::call(OpCode::BatchNorm, bn_args(cat2, 40, 295), bna);
  ir::Expr fn = region({x}, z);
  std::vector<Tensor> in = {random({1, 16, 7, 9}, 28)};
  std::vector<Tensor> want = run_reference(fn, in);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    Ran r = compile_and_run(fn, in, threads);
    ASSERT_EQ(r.outs.size(), 1u);
    EXPECT_LE(rel_err(r.outs[0], want[0]), 1e-5);
    EXPECT_EQ(r.kernels.find(" switchyard:nhwc_channel_concat+batch_norm+relu ") != std::string::npos, r.nhwc()) << r.kernels;
    EXPECT_EQ(r.kernels.find(" switchyard:nhwc_channel_concat+batch_norm ") != std::string::npos, r.nhwc()) << r.kernels;
  }
}

}  // namespace
}  // namespace sy::onednn_test

namespace sy::onednn_test {
namespace {

TEST(OnednnOps, ReductionsPowAndStridedSlice) {
  for (OpCode op : {OpCode::ReduceSum, OpCode::ReduceMean, OpCode::ReduceMax, OpCode::ReduceMin, OpCode::ReduceProd,
                    OpCode::ReduceL1, OpCode::ReduceL2, OpCode::ReduceSumSquare}) {
    for (bool keep : {true, false}) {
      SCOPED_TRACE(ops::op_name(op) + (keep ? " keepdims" : ""));
      ir::Expr x = input("x", {3, 4, 5});
      ops::ReduceAttrs a;
      a.axes = {0, 2};
      a.keepdims = keep;
      expect_matches_reference(region({x}, ir::call(op, {x}, a)), {random({3, 4, 5}, 25, 0.5f, 1.5f)}, 1e-5);
    }
  }
  for (float p : {2.f, 3.f, 0.5f}) {
    ir::Expr x = input("x", {4, 6});
    ir::Expr y = ir::call(OpCode::Pow, {x, ir::constant(Tensor::scalar<float>(p))});
    expect_matches_reference(region({x}, y), {random({4, 6}, 26, 0.1f, 2.f)}, 1e-5);
  }
  ir::Expr x = input("x", {6, 2, 12});
  ops::StridedSliceAttrs s;
  s.begin = {1, 0, 4};
  s.end = {6, 1, 12};
  s.strides = {2, 1, 3};
  expect_matches_reference(region({x}, ir::call(OpCode::StridedSlice, {x}, s)), {random({6, 2, 12}, 27)}, 0.0);
}

}  // namespace
}  // namespace sy::onednn_test
