// conv2d.blocked keeps the channel-blocked layout (nChw<B>c, B its weight block) between its
// calls (native/kept_layouts.h): its result, the tensors added to it, and its data where it reads
// it unpadded at stride 1. A 3x3 conv's padded copy and a strided 1x1 conv read NCHW. The values
// are the reference executor's on both ISA families (16 and 8-lane blocks), on 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
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

ir::Expr conv(const ir::Expr& x, int64_t c_in, int64_t c_out, int64_t k, int64_t stride, uint64_t seed) {
  ops::Conv2dAttrs a;
  const int64_t p = k / 2;
  a.padding = {p, p, p, p};
  a.strides = {stride, stride};
  a.dilation = {1, 1};
  a.groups = 1;
  return ir::call(OpCode::Conv2d, {x, ir::constant(topitest::random(DType::f32, {c_out, c_in, k, k}, -0.2, 0.2, seed)),
                                   ir::constant(topitest::random(DType::f32, {c_out}, -1, 1, seed + 1))}, a);
}

ir::Expr relu(const ir::Expr& x) { return ir::call(OpCode::Relu, {x}); }

// The KeptLayout attribute of each kernel, in the order the model calls them ("" where none).
std::vector<std::string> kept_layouts(const native::Compiled& nc) {
  std::vector<std::string> out;
  for (const ir::CallNode* c : native::primitive_calls(nc.fused)) {
    const ir::FuncAttrs& a = c->callee->as<ir::FunctionNode>()->attrs;
    out.push_back(a.count(topi::kKeptLayoutAttr) ? a.at(topi::kKeptLayoutAttr) : "");
  }
  return out;
}

// A bottleneck block with a projection, then a 1x1 conv read by a strided one and another 1x1
// conv of the block's result: every conv given conv2d.blocked as the strategy's order would.
TEST(BlockedChain, ConvsKeepChannelBlocksBetweenThemAndMatchReference) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 32, 12, 12}, DType::f32));
  ir::Expr r = relu(conv(x, 32, 48, 1, 1, 1));
  ir::Expr b = relu(conv(r, 48, 48, 3, 1, 3));  // its padded copy reads r plain
  ir::Expr p = conv(x, 32, 64, 1, 1, 5);
  ir::Expr e = relu(ir::call(OpCode::Add, {conv(b, 48, 64, 1, 1, 7), p}));
  ir::Expr f = relu(conv(e, 64, 32, 1, 1, 9));
  ir::Expr g = conv(f, 32, 32, 1, 2, 11);  // strided: reads f plain
  ir::Expr h = conv(e, 64, 16, 1, 1, 13);
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::tuple({g, h}));
  const std::vector<Tensor> in = {topitest::random(DType::f32, {1, 32, 12, 12}, -1, 1, 17)};
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::CompileOptions o;
    o.target = t;
    o.chooser = [](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
      std::optional<strategy::Choice> c;
      if (anchor.op == OpCode::Conv2d) c = strategy::Choice{"conv2d.blocked", "", "forced by the test", false, {}, {}, ""};
      return c;
    };
    native::Compiled nc = native::compile_native(m, o);
    EXPECT_EQ(nativetest::count_choices(nc, "conv2d.blocked"), 7) << t.str();
    const std::string L = topi::blocked_layout(t.vector_lanes());
    std::vector<std::string> got = kept_layouts(nc);
    std::sort(got.begin(), got.end());
    // r and g: nothing kept; b and p: their results; e: its data, the added p and its result;
    // f and h: their data (f's result goes to a strided conv, h's is the model's).
    std::vector<std::string> want = {"", "", L + " in=0", L + " in=0", L + " in=0,3 out", L + " out", L + " out"};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << t.str();
    nativetest::expect_reference_values(m, nc, in, "kept channel blocks on " + t.str());
  }
}

// Without records, along the 1x1 and 3x3 convs of many channels on a small plane that
// conv2d.blocked runs by default (ResNet-50's 14x14 stage in small).
TEST(BlockedChain, DefaultsKeepChannelBlocksAlongABottleneck) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 256, 7, 7}, DType::f32));
  ir::Expr r = relu(conv(x, 256, 256, 1, 1, 21));
  ir::Expr b = relu(conv(r, 256, 256, 3, 1, 23));
  ir::Expr e = relu(ir::call(OpCode::Add, {conv(b, 256, 256, 1, 1, 25), x}));
  ir::Expr f = relu(conv(e, 256, 128, 1, 1, 27));
  ir::Module m;
  m.functions["main"] = ir::function({x}, f);
  const std::vector<Tensor> in = {topitest::random(DType::f32, {1, 256, 7, 7}, -1, 1, 29)};
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::CompileOptions o;
    o.target = t;
    native::Compiled nc = native::compile_native(m, o);
    EXPECT_EQ(nativetest::count_choices(nc, "conv2d.blocked"), 4) << t.str();
    const std::string L = topi::blocked_layout(t.vector_lanes());
    EXPECT_EQ(kept_layouts(nc), (std::vector<std::string>{"", L + " out", L + " in=0 out", L + " in=0"})) << t.str();
    nativetest::expect_reference_values(m, nc, in, "defaults on " + t.str());
  }
}

// Where records chose conv2d.blocked, nothing is kept (their weighing sets one keeping option
// against a plain one per call; see native/kept_layouts.cpp), and the tuner times no kept variant.
TEST(BlockedChain, RecordsChoicesKeepNoChannelBlocks) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 256, 7, 7}, DType::f32));
  ir::Expr b = relu(conv(relu(conv(x, 256, 256, 3, 1, 31)), 256, 256, 1, 1, 33));
  ir::Module m;
  m.functions["main"] = ir::function({x}, b);
  native::CompileOptions o;
  o.target = target::host();
  o.chooser = [](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
    std::optional<strategy::Choice> c;
    if (anchor.op == OpCode::Conv2d) c = strategy::Choice{"conv2d.blocked", "", "record: 1 ms", true, {}, {}, ""};
    return c;
  };
  native::Compiled nc = native::compile_native(m, o);
  EXPECT_EQ(nativetest::count_choices(nc, "conv2d.blocked"), 2);
  EXPECT_EQ(kept_layouts(nc), (std::vector<std::string>{"", ""}));
  nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, 256, 7, 7}, -1, 1, 35)}, "records");
  o.chooser = nullptr;
  const std::string L = topi::blocked_layout(target::host().vector_lanes());
  EXPECT_EQ(kept_layouts(native::compile_native(m, o)), (std::vector<std::string>{L + " out", L + " in=0"}));
}

}  // namespace
}  // namespace sy
