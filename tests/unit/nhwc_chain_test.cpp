// conv2d.nhwc (topi/nn_conv2d_nhwc.cpp): along a chain of depthwise convs and the dense convs
// next to them, the activations stay NHWC from call to call (native/kept_layouts.h) without
// records; off a chain the NCHW implementations stay. The results are the reference executor's
// on both ISA families, kept or plain, with every conv forced to it too.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/reference/executor.h"
#include "native/compile.h"
#include "native/plan.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "strategy/strategy.h"
#include "target/host.h"
#include "target/target.h"
#include "topi/topi.h"
#include "compiled_vs_reference.h"
#include "topi_test_data.h"

namespace sy {
namespace {

using ops::OpCode;

ir::Expr conv(const ir::Expr& x, int64_t c_in, int64_t c_out, int64_t k, int64_t stride, int64_t groups, uint64_t seed,
              int64_t dilation = 1) {
  ops::Conv2dAttrs a;
  const int64_t p = k / 2 * dilation;
  a.padding = {p, p, p, p};
  a.strides = {stride, stride};
  a.dilation = {dilation, dilation};
  a.groups = groups;
  return ir::call(OpCode::Conv2d, {x, ir::constant(topitest::random(DType::f32, {c_out, c_in / groups, k, k}, -0.3, 0.3, seed)),
                                   ir::constant(topitest::random(DType::f32, {c_out}, -1, 1, seed + 1))}, a);
}

ir::Expr relu6(const ir::Expr& x) {
  ops::ClipAttrs c;
  c.min = 0;
  c.max = 6;
  return ir::call(OpCode::Clip, {x}, c);
}

// MobileNetV2 in small: a 3x3/2 stem, inverted residual blocks (1x1 expansion, depthwise 3x3 or
// 5x5, strided or dilated, 1x1 projection, a residual add), 24 channels (not whole 16-lane
// vectors: 8-lane ones), a pooled and a plain result.
ir::Module mobilenet_in_small() {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 3, 30, 30}, DType::f32));
  ir::Expr s = relu6(conv(x, 3, 32, 3, 2, 1, 1));                  // 15x15
  ir::Expr d = relu6(conv(s, 32, 32, 3, 1, 32, 3));
  ir::Expr p = conv(d, 32, 16, 1, 1, 1, 5);
  ir::Expr e = relu6(conv(p, 16, 96, 1, 1, 1, 7));
  ir::Expr d2 = relu6(conv(e, 96, 96, 3, 2, 96, 9));               // 8x8
  ir::Expr r = conv(d2, 96, 24, 1, 1, 1, 11);
  ir::Expr e2 = relu6(conv(r, 24, 144, 1, 1, 1, 13));
  ir::Expr d3 = relu6(conv(e2, 144, 144, 5, 1, 144, 15));
  ir::Expr b = ir::call(OpCode::Add, {conv(d3, 144, 24, 1, 1, 1, 17), r});
  ir::Expr e3 = relu6(conv(b, 24, 48, 1, 1, 1, 19));
  ir::Expr d4 = relu6(conv(e3, 48, 48, 3, 1, 48, 21, 2));          // dilated
  ir::Expr out = conv(d4, 48, 32, 1, 1, 1, 23);
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::tuple({ir::call(OpCode::GlobalAvgPool2d, {out}), b}));
  return m;
}

void expect_reference_values(const ir::Module& m, native::Compiled& nc, const std::string& what) {
  nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, 3, 30, 30}, -1, 1, 7)}, what);
}

TEST(NhwcChain, DepthwiseSeparableChainsKeepNhwcWithoutRecords) {
  const ir::Module m = mobilenet_in_small();
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::CompileOptions o;
    o.target = t;
    native::Compiled nc = native::compile_native(m, o);
    int nhwc = 0, kept_both = 0;
    for (const strategy::Choice& c : nc.choices) {
      if (c.implementation != "conv2d.nhwc") continue;
      ++nhwc;
      EXPECT_NE(c.why.find("layout kept with its neighbours: nhwc"), std::string::npos) << c.why;
      kept_both += c.why.find("nhwc in=0") != std::string::npos && c.why.find(" out") != std::string::npos;
    }
    // Every conv is in the chain, and the pool; 9 convs keep both their data and their result:
    // not the stem and the conv after the model's second result (their data plain), not the
    // residual add's conv (its result is the model's).
    EXPECT_EQ(nhwc, 12) << t.str();
    EXPECT_EQ(kept_both, 9) << t.str();
    int pools = 0;
    for (const strategy::Choice& c : nc.choices) pools += c.implementation == "global_avg_pool2d.nhwc";
    EXPECT_EQ(pools, 1) << t.str();
    // The dense convs whose result outweighs their weights (6 of 8: not the two projections of
    // 96 and 144 channels to 24 on 8x8) split their rows between the threads, the rows the next
    // call reads on the same thread; the other two their output channels (each thread half the
    // weights).
    int rows_first = 0, channels_first = 0;
    for (const strategy::Choice& c : nc.choices) {
      rows_first += c.knobs.find("rows_outer_nhwc=1") != std::string::npos;
      channels_first += c.knobs.find("rows_outer_nhwc=0") != std::string::npos;
    }
    EXPECT_EQ(rows_first, 6) << t.str();
    EXPECT_EQ(channels_first, 2) << t.str();
    expect_reference_values(m, nc, "defaults on " + t.str());
  }
}

// Every conv of one kind forced to an implementation (as records choose), the others' to another.
native::Compiled compile_forced(const ir::Module& m, const target::Target& t, const std::string& depthwise,
                                const std::string& dense) {
  native::CompileOptions o;
  o.target = t;
  o.chooser = [=](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
    std::optional<strategy::Choice> c;
    if (anchor.op != OpCode::Conv2d) return c;
    const std::string& impl = anchor.attrs_as<ops::Conv2dAttrs>().groups > 1 ? depthwise : dense;
    if (!impl.empty()) c = strategy::Choice{impl, "", "forced by the test", true, {}, {}, ""};
    return c;
  };
  return native::compile_native(m, o);
}

TEST(NhwcChain, PlainInAndOutMatchesReference) {
  // conv2d.nhwc between NCHW kernels: its data and its result plain, read and written a lane
  // per plane; for the depthwise convs, then for the dense ones.
  const ir::Module m = mobilenet_in_small();
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::Compiled dw = compile_forced(m, t, "conv2d.nhwc", "conv2d.rows");
    EXPECT_EQ(nativetest::count_choices(dw, "conv2d.nhwc"), 4) << t.str();
    for (const strategy::Choice& c : dw.choices) EXPECT_EQ(c.why.find("layout kept"), std::string::npos) << c.why;
    expect_reference_values(m, dw, "depthwise convs NHWC, plain, on " + t.str());
    native::Compiled dense = compile_forced(m, t, "conv2d.depthwise", "conv2d.nhwc");
    EXPECT_EQ(nativetest::count_choices(dense, "conv2d.nhwc"), 8) << t.str();
    expect_reference_values(m, dense, "dense convs NHWC on " + t.str());
  }
}

// A 3x3 stride-2 conv reading 256 channels kept NHWC on a 16-wide plane: each pixel of a
// channel's window is a line 1 KB from the next, the rows 16 KB apart, so the window (3 rows of
// 15 or 17 pixels) falls into 4 of the L1's 64 sets. Kept, it sums the channels in blocks of a
// line outside the taps (in ResNet-50, the 512-channel one ran 2.6x slower channel by channel);
// plain (NCHW, a channel's window a few lines), channel by channel. Values both ways, on both
// ISA families.
TEST(NhwcChain, AKeptConvWhoseWindowCrowdsL1SetsSumsChannelBlocks) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 256, 16, 16}, DType::f32));
  ir::Module m;
  m.functions["main"] = ir::function({x}, conv(relu6(conv(x, 256, 256, 3, 1, 256, 31)), 256, 32, 3, 2, 1, 33));
  const std::vector<Tensor> in = {topitest::random(DType::f32, {1, 256, 16, 16}, -1, 1, 7)};
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::Compiled kept = compile_forced(m, t, "conv2d.nhwc", "conv2d.nhwc");
    EXPECT_EQ(nativetest::count_choices(kept, "conv2d.nhwc"), 2) << t.str();
    std::vector<std::string> layouts;
    for (const ir::CallNode* c : native::primitive_calls(kept.fused)) {
      const ir::FuncAttrs& a = c->callee->as<ir::FunctionNode>()->attrs;
      layouts.push_back(a.count(topi::kKeptLayoutAttr) ? a.at(topi::kKeptLayoutAttr) : "");
    }
    EXPECT_EQ(layouts, (std::vector<std::string>{"nhwc out", "nhwc in=0"})) << t.str();
    EXPECT_NE(kept.generated_c.find("rc_outer < 16LL"), std::string::npos) << t.str();
    nativetest::expect_reference_values(m, kept, in, "kept, in channel blocks, on " + t.str());
    native::Compiled plain = compile_forced(m, t, "conv2d.depthwise", "conv2d.nhwc");
    EXPECT_EQ(nativetest::count_choices(plain, "conv2d.nhwc"), 1) << t.str();
    EXPECT_EQ(plain.generated_c.find("rc_outer"), std::string::npos) << t.str();
    EXPECT_NE(plain.generated_c.find("rc < 256LL"), std::string::npos) << t.str();
    nativetest::expect_reference_values(m, plain, in, "plain, channel by channel, on " + t.str());
  }
}

TEST(NhwcChain, RecordsChoicesStand) {
  // The depthwise convs' records chose another implementation: no chain is left to take.
  const ir::Module m = mobilenet_in_small();
  native::Compiled nc = compile_forced(m, target::host(), "conv2d.depthwise_plane", "");
  EXPECT_EQ(nativetest::count_choices(nc, "conv2d.depthwise_plane"), 4);
  EXPECT_EQ(nativetest::count_choices(nc, "conv2d.nhwc"), 0);
}

ir::Expr silu(const ir::Expr& x) { return ir::call(OpCode::Mul, {x, ir::call(OpCode::Sigmoid, {x})}); }

TEST(NhwcChain, ExcitationComputesItsSigmoidOncePerChannel) {
  // EfficientNet's block: a SiLU expansion, a depthwise conv, a squeeze-and-excitation (pool,
  // 1x1 conv of one pixel, SiLU, 1x1 conv, sigmoid, scaling the depthwise result), the
  // projection and the residual add. The excitation's kernel computes its sigmoid over the 64
  // channels, not again for each of the 64x14x14 elements it scales.
  ir::Expr x = ir::var("x", ir::tensor_type({1, 16, 14, 14}, DType::f32));
  ir::Expr e = silu(conv(x, 16, 64, 1, 1, 1, 31));
  ir::Expr d = silu(conv(e, 64, 64, 3, 1, 64, 33));
  ir::Expr sq = silu(conv(ir::call(OpCode::GlobalAvgPool2d, {d}), 64, 8, 1, 1, 1, 35));
  ir::Expr scaled = ir::call(OpCode::Mul, {d, ir::call(OpCode::Sigmoid, {conv(sq, 8, 64, 1, 1, 1, 37)})});
  ir::Expr out = ir::call(OpCode::Add, {conv(scaled, 64, 16, 1, 1, 1, 39), x});
  ir::Module m;
  m.functions["main"] = ir::function({x}, out);
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::CompileOptions o;
    o.target = t;
    native::Compiled nc = native::compile_native(m, o);
    EXPECT_GE(nativetest::count_choices(nc, "conv2d.nhwc"), 4) << t.str();
    EXPECT_NE(nc.generated_c.find("float sigmoid[64]"), std::string::npos) << t.str();
    nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, 16, 14, 14}, -1, 1, 41)},
                                        "an excitation block on " + t.str());
  }
}

TEST(NhwcChain, FewChannelKxKConvsPairWithoutRecords) {
  // A detector's backbone in small: 3x3 convs of few channels (3 -> 16 -> 32 -> 32, two of them
  // strided) keep NHWC between them with 16 lanes, where they run faster so even with only one
  // side kept; the 1x1 conv after them and the wider 3x3 conv after that stay NCHW (nothing joins
  // a chain without a depthwise link). With 8 lanes (AVX2) nothing pairs.
  ir::Expr x = ir::var("x", ir::tensor_type({1, 3, 34, 34}, DType::f32));
  ir::Expr a = silu(conv(x, 3, 16, 3, 2, 1, 51));    // 17x17
  ir::Expr b = silu(conv(a, 16, 32, 3, 2, 1, 53));   // 9x9
  ir::Expr c = silu(conv(b, 32, 32, 3, 1, 1, 55));
  ir::Expr d = silu(conv(c, 32, 64, 1, 1, 1, 57));
  ir::Expr e = silu(conv(d, 64, 128, 3, 1, 1, 59));
  ir::Module m;
  m.functions["main"] = ir::function({x}, e);
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::CompileOptions o;
    o.target = t;
    native::Compiled nc = native::compile_native(m, o);
    std::vector<std::string> kept;
    for (const strategy::Choice& ch : nc.choices)
      if (ch.implementation == "conv2d.nhwc") kept.push_back(ch.why.substr(ch.why.find("neighbours: ")));
    if (t.vector_lanes() >= 16) {
      // The stem reads the model's input plain; the third writes plain for the 1x1 conv.
      EXPECT_EQ(kept, (std::vector<std::string>{"neighbours: nhwc out", "neighbours: nhwc in=0 out", "neighbours: nhwc in=0"}))
          << t.str();
    } else {
      EXPECT_TRUE(kept.empty()) << t.str();
    }
    nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, 3, 34, 34}, -1, 1, 61)},
                                        "a few-channel backbone on " + t.str());
  }
}

TEST(NhwcChain, OffAChainTheNchwImplementationsStay) {
  // A 3x3 conv between 1x1 convs (ResNet's bottleneck): no depthwise conv, no chain.
  ir::Expr x = ir::var("x", ir::tensor_type({1, 32, 14, 14}, DType::f32));
  ir::Expr a = ir::call(OpCode::Relu, {conv(x, 32, 16, 1, 1, 1, 1)});
  ir::Expr b = ir::call(OpCode::Relu, {conv(a, 16, 16, 3, 1, 1, 3)});
  ir::Expr c = ir::call(OpCode::Add, {conv(b, 16, 32, 1, 1, 1, 5), x});
  ir::Module m;
  m.functions["main"] = ir::function({x}, c);
  native::Compiled nc = native::compile_native(m, native::CompileOptions{});
  for (const strategy::Choice& ch : nc.choices) EXPECT_NE(ch.implementation, "conv2d.nhwc") << ch.why;
}

}  // namespace
}  // namespace sy
