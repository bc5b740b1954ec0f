// The op strategy: its total order, and every implementation that applies computes the same
// values as the reference kernels (each conv2d implementation forced on shapes of the models).
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/reference/executor.h"
#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "strategy/strategy.h"
#include "target/host.h"
#include "topi_test_data.h"

namespace sy {
namespace {

using ops::OpCode;

Tensor rnd(Shape s, uint32_t seed) { return topitest::random(DType::f32, std::move(s), -0.5, 0.5, seed); }

ops::Conv2dAttrs conv(int64_t stride, int64_t pad, int64_t groups = 1) {
  ops::Conv2dAttrs a;
  a.strides = {stride, stride};
  a.padding = {pad, pad, pad, pad};
  a.dilation = {1, 1};
  a.groups = groups;
  return a;
}

// conv + bias, + a residual, relu: the group shape of the CNNs.
ir::Module conv_block(Shape xs, Shape ws, ops::Conv2dAttrs a) {
  ir::Expr x = ir::var("x", ir::tensor_type(xs, DType::f32));
  ir::Expr y = ir::call(OpCode::Conv2d, {x, ir::constant(rnd(ws, 11)), ir::constant(rnd({ws[0]}, 12))}, a);
  ir::Expr r = ir::var("r", ir::tensor_type(ir::shape_of(y), DType::f32));
  y = ir::call(OpCode::Relu, {ir::call(OpCode::Add, {y, r})});
  ir::Module m;
  m.functions["main"] = ir::function({x, r}, y);
  return m;
}

// The block's conv: the first Conv2d down the chain of first operands from the body.
const ir::CallNode* conv_call(const ir::Module& m) {
  const ir::CallNode* c = m.main().body->as<ir::CallNode>();
  while (c && c->op != OpCode::Conv2d) c = c->args.empty() ? nullptr : c->args[0]->as<ir::CallNode>();
  return c;
}

TEST(Strategy, ConvImplementationsApplyAsDocumented) {
  const target::Target& t = target::host();
  ir::Module pw = conv_block({1, 64, 14, 14}, {32, 64, 1, 1}, conv(1, 0));
  // topi's own implementations (extern ones the build registers come after them, at priority 0).
  auto native_only = [](const strategy::Applicable& a) {
    std::vector<std::string> names;
    for (const auto& e : a.entries)
      for (const topi::OpImpl& i : topi::implementations(OpCode::Conv2d))
        if (i.name == e.impl->name) names.push_back(i.name);
    return names;
  };
  strategy::Applicable a = strategy::applicable(*conv_call(pw), t);
  EXPECT_EQ(native_only(a), (std::vector<std::string>{"conv2d.flat", "conv2d.blocked", "conv2d.rows", "conv2d.nhwc"}));
  for (const auto& e : a.entries) EXPECT_TRUE(e.priority > 0 || !e.impl->library.empty()) << e.impl->name;
  ASSERT_EQ(a.rejected.size(), 5u);
  EXPECT_EQ(a.rejected[0].first, "conv2d.grouped_blocked");
  EXPECT_EQ(a.rejected[1].first, "conv2d.depthwise");
  EXPECT_EQ(a.rejected[2].first, "conv2d.depthwise_plane");
  EXPECT_EQ(a.rejected[3].first, "conv2d.grouped_plane");
  EXPECT_EQ(a.rejected[4].first, "conv2d.direct");

  // Depthwise: over the flattened plane, strided too; by output rows next; the generic grouped
  // ones after them; last the NHWC one, taken without records only in chains of kept layouts.
  ir::Module dw = conv_block({1, 32, 14, 14}, {32, 1, 3, 3}, conv(1, 1, 32));
  a = strategy::applicable(*conv_call(dw), t);
  EXPECT_EQ(native_only(a),
            (std::vector<std::string>{"conv2d.depthwise_plane", "conv2d.depthwise", "conv2d.rows", "conv2d.direct",
                                      "conv2d.nhwc"}));
  EXPECT_EQ(a.entries[0].impl->name, "conv2d.depthwise_plane");
  ir::Module dw2 = conv_block({1, 32, 14, 14}, {32, 1, 3, 3}, conv(2, 1, 32));
  a = strategy::applicable(*conv_call(dw2), t);
  EXPECT_EQ(native_only(a),
            (std::vector<std::string>{"conv2d.depthwise_plane", "conv2d.depthwise", "conv2d.rows", "conv2d.direct",
                                      "conv2d.nhwc"}));
  // Grouped (ResNeXt's groups of 4 channels): over the flattened plane, then vectors along the
  // rows, then the direct loops; on a wide plane, where a group's short reduction fills rows of
  // whole vectors, along the rows first.
  ir::Module gr = conv_block({1, 128, 14, 14}, {128, 4, 3, 3}, conv(1, 1, 32));
  a = strategy::applicable(*conv_call(gr), t);
  EXPECT_EQ(native_only(a), (std::vector<std::string>{"conv2d.grouped_plane", "conv2d.rows", "conv2d.direct"}));
  auto why = std::find_if(a.rejected.begin(), a.rejected.end(),
                          [](const auto& r) { return r.first == "conv2d.grouped_blocked"; });
  ASSERT_NE(why, a.rejected.end());
  EXPECT_NE(why->second.find("groups of 4 output channels"), std::string::npos) << why->second;
  // Groups of 16 output channels (RegNetX's; whole vectors with AVX-512 and AVX2): blocked first.
  ir::Module gr16 = conv_block({1, 160, 14, 14}, {160, 16, 3, 3}, conv(1, 1, 10));
  a = strategy::applicable(*conv_call(gr16), t);
  EXPECT_EQ(native_only(a),
            (std::vector<std::string>{"conv2d.grouped_blocked", "conv2d.grouped_plane", "conv2d.rows", "conv2d.direct"}));
  ir::Module gr56 = conv_block({1, 128, 56, 56}, {128, 4, 3, 3}, conv(1, 1, 32));
  a = strategy::applicable(*conv_call(gr56), t);
  EXPECT_EQ(native_only(a), (std::vector<std::string>{"conv2d.rows", "conv2d.grouped_plane", "conv2d.direct"}));
  EXPECT_THROW(strategy::require(*conv_call(dw), t, "conv2d.flat"), Error);
  EXPECT_THROW(strategy::require(*conv_call(dw), t, "conv2d.nonesuch"), Error);
}

TEST(Strategy, EqualPrioritiesAreOrderedByName) {
  // Two test implementations of softmax at softmax's own priority: the order is by name, so the
  // "a." one comes before topi's "nn.softmax" and the "z." one after it.
  auto copy_of = [](const std::string& name) {
    topi::OpImpl i = *strategy::implementations(OpCode::Softmax).front();
    i.name = name;
    return i;
  };
  strategy::register_implementation(OpCode::Softmax, copy_of("z.softmax"));
  strategy::register_implementation(OpCode::Softmax, copy_of("a.softmax"));
  ir::Expr x = ir::var("x", ir::tensor_type({2, 8}, DType::f32));
  ir::Expr s = ir::call(OpCode::Softmax, {x});
  strategy::Applicable a = strategy::applicable(*s->as<ir::CallNode>(), target::host());
  ASSERT_EQ(a.entries.size(), 3u);
  EXPECT_EQ(a.entries[0].impl->name, "a.softmax");
  EXPECT_EQ(a.entries[1].impl->name, "nn.softmax");
  EXPECT_EQ(a.entries[2].impl->name, "z.softmax");
  EXPECT_ANY_THROW(strategy::register_implementation(OpCode::Softmax, copy_of("a.softmax")));
}

// One float output within 1e-4 (absolute and relative) of the reference's; at most 5 failures said.
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), 1u) << what;
  int bad = 0;
  for (int64_t i = 0; i < want[0].numel() && bad < 5; ++i) {
    const double g = got[0].data<float>()[i], w = want[0].data<float>()[i];
    if (!(std::abs(g - w) <= 1e-4 + 1e-4 * std::abs(w))) {
      ++bad;
      ADD_FAILURE() << what << " element " << i << ": native " << g << ", reference " << w;
    }
  }
}

// The model compiled natively with its convs forced to implementation `impl` with `knobs` (the
// others at their defaults), for target string t (empty: the host).
native::Compiled compile_conv_forced(const ir::Module& m, const std::string& t, const std::string& impl,
                                     const std::string& knobs) {
  native::CompileOptions o;
  if (!t.empty()) o.target = target::parse(t);
  o.chooser = [&](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
    std::optional<strategy::Choice> c;
    if (anchor.op == OpCode::Conv2d) c = strategy::Choice{impl, knobs, "forced by the test", true, {}, {}, ""};
    return c;
  };
  return native::compile_native(m, o);
}

// Whether the first kernel's knobs include `k` ("name=value").
bool has_knob(const native::Compiled& nc, const std::string& k) {
  return (" " + nc.choices.at(0).knobs + " ").find(" " + k + " ") != std::string::npos;
}

// Forces each applicable implementation of the model's conv on the native path and compares with
// the reference executor on the unfused model.
void expect_every_conv_implementation_matches(const ir::Module& m, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  strategy::Applicable a = strategy::applicable(*conv_call(m), target::host());
  ASSERT_GE(a.entries.size(), 1u);
  for (const auto& e : a.entries) {
    const std::string name = e.impl->name;
    native::Compiled nc = compile_conv_forced(m, "", name, "");
    ASSERT_TRUE(nc.fallbacks.empty()) << name << ": " << nc.fallbacks[0].second;
    bool used = false;
    for (const strategy::Choice& c : nc.choices) used |= c.implementation == name;
    EXPECT_TRUE(used) << name << " was not used";
    expect_close(nc.executable->run(inputs, 0, nullptr), want, name);
  }
}

TEST(Strategy, EveryConvImplementationMatchesReference) {
  struct Case {
    Shape xs, ws;
    ops::Conv2dAttrs a;
  };
  for (const Case& c : std::vector<Case>{
           {{1, 24, 28, 28}, {40, 24, 1, 1}, conv(1, 0)},        // pointwise: flat, blocked, rows
           {{1, 3, 30, 30}, {16, 3, 3, 3}, conv(2, 1)},          // a stem: rows, blocked
           {{1, 20, 9, 11}, {36, 20, 3, 3}, conv(1, 1)},         // odd sizes, a channel tail
           {{1, 16, 15, 15}, {16, 1, 3, 3}, conv(2, 1, 16)},     // depthwise (both), direct
           {{1, 24, 13, 9}, {24, 1, 3, 3}, conv(1, 1, 24)},      // odd plane, stride 1
           {{1, 4, 60, 100}, {4, 1, 3, 3}, conv(1, 1, 4)},       // the plane in blocks of rows
           {{1, 4, 64, 200}, {4, 1, 5, 5}, conv(2, 2, 4)},       // 5x5, strided, in blocks of rows
           {{1, 8, 17, 12}, {8, 1, 3, 3}, [] {                   // unequal strides, dilation, padding
              ops::Conv2dAttrs a = conv(1, 0, 8);
              a.strides = {2, 1};
              a.padding = {0, 1, 2, 1};
              a.dilation = {2, 2};
              return a;
            }()},
           {{1, 12, 8, 8}, {18, 4, 3, 3}, conv(1, 1, 3)},        // grouped: grouped_plane, rows, direct
           {{1, 64, 7, 7}, {64, 16, 3, 3}, conv(1, 1, 4)},       // groups of 16 on a 7x7 plane (grid of 4 vectors)
           {{1, 32, 14, 14}, {32, 8, 3, 3}, conv(2, 1, 4)},      // strided: the grid reads the phases' extra rows
           {{1, 32, 9, 52}, {32, 4, 3, 3}, conv(1, 1, 8)},       // ResNeXt's groups of 4, a wide row
           {{1, 24, 15, 15}, {48, 8, 3, 3}, [] {                 // groups of 8 in, 16 out, strided, dilated
              ops::Conv2dAttrs a = conv(2, 1, 3);
              a.dilation = {2, 1};
              return a;
            }()},
           {{1, 64, 10, 10}, {64, 32, 3, 3}, conv(1, 1, 2)},     // groups of 32 out: tiles of 2 blocks of a group
           {{1, 32, 11, 13}, {32, 16, 3, 3}, [] {                // grouped_blocked: unequal strides and padding
              ops::Conv2dAttrs a = conv(1, 0, 2);
              a.strides = {2, 1};
              a.padding = {0, 1, 2, 1};
              a.dilation = {2, 2};
              return a;
            }()}}) {
    ir::Module m = conv_block(c.xs, c.ws, c.a);
    std::vector<Tensor> inputs{rnd(c.xs, 21), rnd(ir::shape_of(m.main().body), 22)};
    expect_every_conv_implementation_matches(m, inputs);
  }
}

// conv + bias, then SiLU (x * sigmoid(x)): an epilogue that calls expf, which the schedules write
// out in whole vectors (the blocked tile along its channels, a strided depthwise block's rows
// flattened); every implementation that applies against the reference, in rows that are not
// whole vectors (28, 14, 7 wide).
TEST(Strategy, EveryConvImplementationWithASiluEpilogueMatchesReference) {
  struct Case {
    Shape xs, ws;
    ops::Conv2dAttrs a;
  };
  for (const Case& c : std::vector<Case>{
           {{1, 16, 56, 56}, {16, 1, 5, 5}, conv(2, 2, 16)},  // strided depthwise: 28-wide rows
           {{1, 24, 28, 28}, {24, 1, 3, 3}, conv(2, 1, 24)},  // strided depthwise: 14-wide rows
           {{1, 24, 14, 14}, {48, 24, 3, 3}, conv(1, 1)},     // 3x3: blocked, rows
           {{1, 256, 7, 7}, {64, 256, 1, 1}, conv(1, 0)}}) {  // 1x1 on 7x7: blocked, flat
    ir::Expr x = ir::var("x", ir::tensor_type(c.xs, DType::f32));
    ir::Expr y = ir::call(OpCode::Conv2d, {x, ir::constant(rnd(c.ws, 13)), ir::constant(rnd({c.ws[0]}, 14))}, c.a);
    y = ir::call(OpCode::Mul, {y, ir::call(OpCode::Sigmoid, {y})});
    ir::Module m;
    m.functions["main"] = ir::function({x}, y);
    expect_every_conv_implementation_matches(m, {rnd(c.xs, 23)});
  }
}

// A squeeze-excitation: a conv of one pixel (1x1x40), sigmoid, times the map it scales
// (96x14x14), one fused kernel whose output is larger than the conv's. The conv keeps its own
// schedule (its implementation's knobs; the injective loops ran it scalar), the output's loops
// read it; every implementation against the reference.
TEST(Strategy, AConvSpreadOverALargerOutputKeepsItsSchedule) {
  ir::Expr s = ir::var("s", ir::tensor_type({1, 40, 1, 1}, DType::f32));
  ir::Expr x = ir::var("x", ir::tensor_type({1, 96, 14, 14}, DType::f32));
  ir::Expr y = ir::call(OpCode::Conv2d, {s, ir::constant(rnd({96, 40, 1, 1}, 15)), ir::constant(rnd({96}, 16))}, conv(1, 0));
  y = ir::call(OpCode::Mul, {ir::call(OpCode::Sigmoid, {y}), x});
  ir::Module m;
  m.functions["main"] = ir::function({s, x}, y);
  const std::vector<Tensor> inputs{rnd({1, 40, 1, 1}, 24), rnd({1, 96, 14, 14}, 25)};
  expect_every_conv_implementation_matches(m, inputs);
  native::Compiled nc = native::compile_native(m);
  ASSERT_EQ(nc.choices.size(), 1u);
  EXPECT_EQ(nc.choices[0].implementation, "conv2d.blocked");  // a plane of one pixel: not flat
  EXPECT_NE(nc.choices[0].knobs.find("tile_oc="), std::string::npos) << nc.choices[0].knobs;
  expect_close(nc.executable->run(inputs, 0, nullptr), reference::run_module(m, inputs).value(), "default");
}

// A pointwise conv whose input plane spills half of L2 (ResNet-50's 256 channels on 56x56) takes
// the widest register tile whose pixels divide the plane by default, so that the plane is read in
// L2-sized chunks; on both ISA families, with the reference's values at 2 threads. The chunked
// parallel loop also runs the residual epilogue.
TEST(Strategy, FlatConvOnASpillingPlaneIsReadInChunks) {
  ir::Module m = conv_block({1, 256, 56, 56}, {64, 256, 1, 1}, conv(1, 0));
  std::vector<Tensor> inputs{rnd({1, 256, 56, 56}, 31), rnd({1, 64, 56, 56}, 32)};
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  for (const char* t : {"cpu -isa=avx512 -l2=2M -cores=2", "cpu -isa=avx2 -l2=1M -cores=2"}) {
    native::CompileOptions o;
    o.target = target::parse(t);
    native::Compiled nc = native::compile_native(m, o);
    ASSERT_EQ(nc.choices.size(), 1u);
    EXPECT_EQ(nc.choices[0].implementation, "conv2d.flat") << t;
    const std::string& k = nc.choices[0].knobs;
    EXPECT_NE(k.find("chunk_tiles="), std::string::npos) << t << ": " << k;  // defined only when tiles divide
    const int64_t lanes = o.target->vector_lanes();
    const size_t at = k.find("tile_vectors_flat=");
    ASSERT_NE(at, std::string::npos) << k;
    EXPECT_EQ(56 * 56 % (std::stoll(k.substr(at + 18)) * lanes), 0) << t << ": " << k;
    if (!o.target->missing_on(target::host()).empty()) continue;  // cannot run here
    expect_close(nc.executable->run(inputs, 2, nullptr), want, t);
  }
}

// The blocked and the NHWC convs in passes of input channels (k_block, k_block_nhwc): by default
// where a tile's weights over all the input channels exceed half of L1 on a 32-register target
// (KxK convs, 1x1 convs with the channel tiles outside; NHWC on planes of 16 tiles or more),
// never by default with 16 registers;
// forced, on both ISA families, at every pass size the knob offers, with odd planes (tails of
// row and pixel tiles), padding and stride, the residual epilogue, at 2 threads against the
// reference.
TEST(Strategy, ConvsInPassesOfInputChannelsMatchReference) {
  struct Case {
    Shape xs, ws;
    ops::Conv2dAttrs a;
  };
  for (const Case& c : std::vector<Case>{{{1, 512, 14, 14}, {256, 512, 1, 1}, conv(1, 0)},
                                         {{1, 128, 13, 11}, {64, 128, 3, 3}, conv(1, 1)},
                                         {{1, 192, 31, 31}, {64, 192, 3, 3}, conv(2, 1)}}) {
    ir::Module m = conv_block(c.xs, c.ws, c.a);
    std::vector<Tensor> inputs{rnd(c.xs, 51), rnd(ir::shape_of(m.main().body), 52)};
    std::vector<Tensor> want = reference::run_module(m, inputs).value();
    for (const char* t : {"cpu -isa=avx512 -l1d=48K -l2=2M -cores=2", "cpu -isa=avx2 -l1d=32K -l2=512K -cores=2"})
      for (const auto& [name, knob] : std::vector<std::pair<std::string, std::string>>{{"conv2d.blocked", "k_block="},
                                                                                      {"conv2d.nhwc", "k_block_nhwc="}}) {
        const std::string impl = name, what = std::string(t) + " " + impl;
        auto compile = [&](const std::string& knobs) { return compile_conv_forced(m, t, impl, knobs); };
        native::Compiled d = compile("");
        ASSERT_EQ(d.choices.size(), 1u);
        const std::string k = d.choices[0].knobs + " ";
        const size_t at = k.find(" " + knob);
        ASSERT_NE(at, std::string::npos) << what << ": " << k;
        const int64_t C = c.xs[1], by_default = std::stoll(k.substr(at + 1 + knob.size()));
        const bool avx2 = std::string(t).find("avx2") != std::string::npos;
        EXPECT_EQ(by_default < C, !avx2) << what << ": " << k;
        const bool runs_here = target::parse(t).missing_on(target::host()).empty();
        int passes = 0;
        for (int64_t kb = 8; kb <= C; kb += 8) {
          if (C % kb != 0) continue;
          native::Compiled nc = compile(knob + std::to_string(kb));
          // A value the knob does not offer for this shape and target: lowered with the defaults.
          if (!has_knob(nc, knob + std::to_string(kb))) continue;
          passes += kb < C;
          if (runs_here) expect_close(nc.executable->run(inputs, 2, nullptr), want, what + " " + knob + std::to_string(kb));
        }
        EXPECT_GE(passes, 1) << what;
      }
  }
}

// The blocked conv's padded input copied by each group of rows in passes (pad_in_group): by
// default with one channel tile (DenseNet's 128 -> 32), not with several (each would copy the
// rows again); forced both ways, with passes, on both ISA families, on a plane whose first and
// last groups are peeled off for the padding, odd planes and a stride, against the reference at
// 1 and 2 threads.
TEST(Strategy, PaddedCopyByGroupOfRowsMatchesReference) {
  struct Case {
    Shape xs, ws;
    ops::Conv2dAttrs a;
    int64_t by_default;
  };
  for (const Case& c : std::vector<Case>{{{1, 128, 28, 28}, {32, 128, 3, 3}, conv(1, 1), 1},
                                         {{1, 128, 13, 11}, {32, 128, 3, 3}, conv(1, 1), 1},
                                         {{1, 192, 31, 31}, {64, 192, 3, 3}, conv(2, 1), 0}}) {
    ir::Module m = conv_block(c.xs, c.ws, c.a);
    std::vector<Tensor> inputs{rnd(c.xs, 61), rnd(ir::shape_of(m.main().body), 62)};
    std::vector<Tensor> want = reference::run_module(m, inputs).value();
    for (const char* t : {"cpu -isa=avx512 -l1d=48K -l2=2M -cores=2", "cpu -isa=avx2 -l1d=32K -l2=512K -cores=2"}) {
      auto compile = [&](const std::string& knobs) { return compile_conv_forced(m, t, "conv2d.blocked", knobs); };
      const std::string what = std::string(t) + " " + std::to_string(c.xs[1]) + "x" + std::to_string(c.xs[2]);
      if (std::string(t).find("avx512") != std::string::npos) {
        native::Compiled d = compile("");
        EXPECT_TRUE(has_knob(d, "pad_in_group=" + std::to_string(c.by_default))) << what << ": " << d.choices.at(0).knobs;
      }
      const bool runs_here = target::parse(t).missing_on(target::host()).empty();
      // A pass size this shape and target offer.
      std::string passes;
      for (int64_t kb = 8; kb < c.xs[1] && passes.empty(); kb += 8) {
        const std::string k = "k_block=" + std::to_string(kb);
        if (c.xs[1] % kb == 0 && has_knob(compile(k), k)) passes = k;
      }
      ASSERT_NE(passes, "") << what;
      for (int in_group : {0, 1}) {
        const std::string knobs = passes + " pad_in_group=" + std::to_string(in_group);
        native::Compiled nc = compile(knobs);
        EXPECT_TRUE(has_knob(nc, "pad_in_group=" + std::to_string(in_group))) << what << ": " << nc.choices.at(0).knobs;
        if (!runs_here) continue;
        for (int threads : {1, 2}) expect_close(nc.executable->run(inputs, threads, nullptr), want, what + " " + knobs);
      }
    }
  }
}

// A classifier's one-row dense (1x2048 by 2048x1000) has 1000 outputs but 2M products: it is
// split over the cores (it ran no faster on 2 than on 1), with the reference's values. (Its
// blocks of 16 outputs and the tail of 8 are pieces of one parallel loop, in one team.)
TEST(Strategy, OneRowDenseWithALongReductionRunsInParallel) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 2048}, DType::f32));
  ir::Module m;
  m.functions["main"] =
      ir::function({x}, ir::call(OpCode::Dense, {x, ir::constant(rnd({1000, 2048}, 41)), ir::constant(rnd({1000}, 42))}));
  native::Compiled nc = native::compile_native(m);
  EXPECT_NE(nc.generated_c.find("#pragma omp parallel"), std::string::npos) << nc.generated_c;
  std::vector<Tensor> inputs{rnd({1, 2048}, 43)};
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  expect_close(nc.executable->run(inputs, 2, nullptr), want, "one-row dense");
}

TEST(Strategy, ChoicesAreReportedPerKernel) {
  ir::Module m = conv_block({1, 24, 28, 28}, {40, 24, 1, 1}, conv(1, 0));
  native::Compiled nc = native::compile_native(m);
  ASSERT_EQ(nc.choices.size(), nc.executable->plan().kernels.size());
  ASSERT_EQ(nc.choices.size(), 1u);
  EXPECT_EQ(nc.choices[0].implementation, "conv2d.flat");
  EXPECT_FALSE(nc.choices[0].from_record);
  EXPECT_NE(nc.choices[0].why.find("priority 30"), std::string::npos) << nc.choices[0].why;
  EXPECT_NE(nc.choices[0].knobs.find("tile_o_flat="), std::string::npos) << nc.choices[0].knobs;
}

}  // namespace
}  // namespace sy
