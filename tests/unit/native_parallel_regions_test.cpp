// How often a kernel forks its threads. Every `omp parallel` is a fork and a join of the team;
// on a VM whose idle vCPU is descheduled each costs tens of microseconds, more than a small
// loop's work (ResNet-50 forked 243 times per inference, DenseNet-121 785 times, for 56 and 137
// kernels). These tests hold the counts down and check the values at 2 threads.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "backends/reference/executor.h"
#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "target/host.h"
#include "topi_test_data.h"

namespace sy {
namespace {

using ops::OpCode;

Tensor rnd(Shape s, uint32_t seed) { return topitest::random(DType::f32, std::move(s), -0.5, 0.5, seed); }

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void expect_close(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.numel(), want.numel());
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
    const double g = got.data<float>()[i], w = want.data<float>()[i];
    if (!(std::abs(g - w) <= 1e-4 + 1e-4 * std::abs(w))) {
      ++bad;
      ADD_FAILURE() << "element " << i << ": native " << g << ", reference " << w;
    }
  }
}

// A DenseNet-style concat of 12 inputs with batch norm and relu after it: loop partitioning
// makes one loop per input, all pieces of one parallel loop, so they share one team of threads
// (no barrier between them: they write disjoint channels).
TEST(NativeParallelRegions, AConcatsLoopPerInputIsOneTeam) {
  std::vector<ir::Expr> xs;
  std::vector<Tensor> inputs;
  for (int i = 0; i < 12; ++i) {
    const int64_t c = i == 0 ? 64 : 32;
    std::string name = "x";  // not "x" + to_string: GCC 12 warns of a memcpy overlap (-Wrestrict)
    name += std::to_string(i);
    xs.push_back(ir::var(name, ir::tensor_type({1, c, 14, 14}, DType::f32)));
    inputs.push_back(rnd({1, c, 14, 14}, 100 + static_cast<uint32_t>(i)));
  }
  ops::AxisAttrs axis;
  axis.axis = 1;
  ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Concat, xs, axis)});
  ir::Module m;
  m.functions["main"] = ir::function(xs, y);
  native::Compiled nc = native::compile_native(m);
  EXPECT_EQ(count(nc.generated_c, "#pragma omp parallel"), 1) << nc.generated_c;
  EXPECT_EQ(count(nc.generated_c, "(sy_from > "), 12) << nc.generated_c;
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  expect_close(nc.executable->run(inputs, 2, nullptr)[0], want[0]);
}

// The header of the generated C's first parallel loop: an `omp parallel for`, or the pieces of
// one loop in a team, which shares the whole range out (sy_team_share(first, count, ...)) and
// runs each piece's part of a thread's share.
std::string first_parallel_loop(const std::string& c) {
  const size_t par = c.find("#pragma omp parallel");
  if (par == std::string::npos) return "";
  const size_t share = c.find("sy_team_share(", par);
  const size_t loop = c.find("for (", par + 10);
  const size_t from = share != std::string::npos && share < loop ? share : loop;
  return c.substr(from, c.find('\n', loop) - from);
}

// A DenseNet-style concat (batch norm and relu after it) of 28x28 planes, planned for 2 cores:
// the threads split the rows of every channel, as the convs that write its inputs and read its
// result do (split by channels, each thread read half its input from the other core's cache:
// 2.4x its 1-thread time on two CCDs). A plane of one row keeps the channels in the parallel loops.
TEST(NativeParallelRegions, AConcatSplitsThePlanesRows) {
  for (const auto& [H, W] : std::vector<std::pair<int64_t, int64_t>>{{28, 28}, {1, 256}}) {
    std::vector<ir::Expr> xs;
    std::vector<Tensor> inputs;
    for (int i = 0; i < 3; ++i) {
      const int64_t c = i == 0 ? 64 : 32;
      std::string name = "x";
      name += std::to_string(i);
      xs.push_back(ir::var(name, ir::tensor_type({1, c, H, W}, DType::f32)));
      inputs.push_back(rnd({1, c, H, W}, 200 + static_cast<uint32_t>(i)));
    }
    ops::AxisAttrs axis;
    axis.axis = 1;
    ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Concat, xs, axis)});
    ir::Module m;
    m.functions["main"] = ir::function(xs, y);
    native::CompileOptions two;
    two.target = target::parse("cpu -cores=2");
    native::Compiled nc = native::compile_native(m, two);
    // Axes i, j, k, l are N, C, H, W: rows alone (fused with the batch) in one parallel loop, or
    // (one row) the channels, in one loop per input of one team.
    if (H > 1) {
      EXPECT_NE(first_parallel_loop(nc.generated_c).find("i_k_fused < 28LL"), std::string::npos) << nc.generated_c;
    } else {
      EXPECT_EQ(count(nc.generated_c, "(sy_from > "), 3) << nc.generated_c;
      EXPECT_NE(nc.generated_c.find("sy_team_share(0LL, 128LL"), std::string::npos) << nc.generated_c;
    }
    std::vector<Tensor> want = reference::run_module(m, inputs).value();
    expect_close(nc.executable->run(inputs, 2, nullptr)[0], want[0]);
    expect_close(nc.executable->run(inputs, 1, nullptr)[0], want[0]);
  }
}

// DenseNet's 3x3 conv of 128 -> 32 channels on 28x28, planned for 2 cores: its row blocks are the
// parallel loop. Without passes of input channels (AVX2) the padded copy before it splits the
// rows too (the interior rows 1..28 of 30 a piece, the zero rows 0 and 29 peeled off, all 30
// shared out by one team), so each thread pads what it reads; in passes (AVX-512) each group of
// rows pads its own rows, inside the conv's one parallel loop.
TEST(NativeParallelRegions, APaddedCopySplitsTheRowsWhereTheConvDoes) {
  ops::Conv2dAttrs a;
  a.strides = {1, 1};
  a.padding = {1, 1, 1, 1};
  a.dilation = {1, 1};
  ir::Expr x = ir::var("x", ir::tensor_type({1, 128, 28, 28}, DType::f32));
  ir::Expr y = ir::call(OpCode::Conv2d, {x, ir::constant(rnd({32, 128, 3, 3}, 31))}, a);
  ir::Module m;
  m.functions["main"] = ir::function({x}, y);
  std::vector<Tensor> inputs{rnd({1, 128, 28, 28}, 32)};
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  for (const char* t : {"cpu -isa=avx2 -cores=2", "cpu -isa=avx512 -cores=2"}) {
    native::CompileOptions two;
    two.target = target::parse(t);
    native::Compiled nc = native::compile_native(m, two);
    if (std::string(t).find("avx2") != std::string::npos) {
      EXPECT_NE(first_parallel_loop(nc.generated_c).find("sy_team_share(0LL, 30LL"), std::string::npos) << nc.generated_c;
      EXPECT_NE(nc.generated_c.find("i_k_fused = (sy_from > 1LL ? sy_from : 1LL); i_k_fused < (sy_to < 29LL ? sy_to : 29LL)"),
                std::string::npos)
          << nc.generated_c;
    } else {
      EXPECT_EQ(count(nc.generated_c, "#pragma omp parallel"), 1) << nc.generated_c;
      EXPECT_NE(nc.choices.at(0).knobs.find("pad_in_group=1"), std::string::npos) << nc.choices.at(0).knobs;
    }
    if (!two.target->missing_on(target::host()).empty()) continue;
    expect_close(nc.executable->run(inputs, 2, nullptr)[0], want[0]);
    expect_close(nc.executable->run(inputs, 1, nullptr)[0], want[0]);
  }
}

// ResNet-50's 3x3 conv on 256 channels of 14x14: its pad loop fuses channels with rows, so the
// pad's row test repeats every 16 rows. Peeling it piece by piece had made 18 parallel loops of
// 14 rows each; the pad and the conv are now one parallel loop each.
TEST(NativeParallelRegions, APadOverFusedChannelsAndRowsIsOneLoop) {
  ops::Conv2dAttrs a;
  a.strides = {1, 1};
  a.padding = {1, 1, 1, 1};
  a.dilation = {1, 1};
  ir::Expr x = ir::var("x", ir::tensor_type({1, 256, 14, 14}, DType::f32));
  ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Conv2d,
                                                {x, ir::constant(rnd({256, 256, 3, 3}, 11)), ir::constant(rnd({256}, 12))}, a)});
  ir::Module m;
  m.functions["main"] = ir::function({x}, y);
  native::Compiled nc = native::compile_native(m);
  EXPECT_LE(count(nc.generated_c, "#pragma omp parallel"), 2) << nc.generated_c;
  std::vector<Tensor> inputs{rnd({1, 256, 14, 14}, 13)};
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  expect_close(nc.executable->run(inputs, 2, nullptr)[0], want[0]);
}

// MobileNetV2's projection: 192 -> 32 channels on a 28x28 plane, after a depthwise conv whose
// threads split the channels. Split by blocks of output channels, each thread read the whole
// input, half of it from the other core's cache, and ran slower on 2 threads than on 1; planned
// for 2 cores, the threads split the plane's pixel tiles (the parallel loop runs over pixels),
// and the values hold at 1 and 2 threads.
TEST(NativeParallelRegions, AProjectionToFewChannelsSplitsThePixels) {
  ops::Conv2dAttrs a;
  a.strides = {1, 1};
  a.padding = {0, 0, 0, 0};
  a.dilation = {1, 1};
  ir::Expr x = ir::var("x", ir::tensor_type({1, 192, 28, 28}, DType::f32));
  ir::Expr y = ir::call(OpCode::Conv2d, {x, ir::constant(rnd({32, 192, 1, 1}, 21)), ir::constant(rnd({32}, 22))}, a);
  ir::Module m;
  m.functions["main"] = ir::function({x}, y);
  native::CompileOptions two;
  two.target = target::parse("cpu -cores=2");
  native::Compiled nc = native::compile_native(m, two);
  const std::string loop = first_parallel_loop(nc.generated_c);
  ASSERT_NE(loop, "") << nc.generated_c;
  // The pixel axis (k, l fused) is in the parallel loop, outside the channel blocks (j) if they
  // are fused into it too (with 8 lanes the plane is cache-blocked: chunks of pixel tiles, each
  // for all the blocks): a thread's contiguous share of the iterations is a run of pixels.
  const size_t pixels = loop.find("k_l_fused"), blocks = loop.find("j_outer");
  EXPECT_NE(pixels, std::string::npos) << loop;
  EXPECT_TRUE(blocks == std::string::npos || blocks > pixels) << loop;
  native::CompileOptions one;
  one.target = target::parse("cpu -cores=1");
  native::Compiled nc1 = native::compile_native(m, one);
  EXPECT_NE(first_parallel_loop(nc1.generated_c).find("j_outer"), std::string::npos) << "one core: by channel blocks";
  std::vector<Tensor> inputs{rnd({1, 192, 28, 28}, 23)};
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  expect_close(nc.executable->run(inputs, 2, nullptr)[0], want[0]);
  expect_close(nc.executable->run(inputs, 1, nullptr)[0], want[0]);
}

}  // namespace
}  // namespace sy
