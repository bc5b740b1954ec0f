// concatenate.nhwc (topi/nn_concat_nhwc.cpp): in a DenseNet-style block, where records chose it
// and the NHWC convs, the concatenations of the block's features (the batch norm and ReLU after
// them fused) pass NHWC from conv to conv; without records nothing changes; a concatenation whose
// inputs are not whole vectors of channels stays NCHW. The results are the reference executor's
// on both ISA families, kept or plain.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "strategy/strategy.h"
#include "target/host.h"
#include "target/target.h"
#include "compiled_vs_reference.h"
#include "topi_test_data.h"

namespace sy {
namespace {

using ops::OpCode;

ir::Expr conv(const ir::Expr& x, int64_t c_in, int64_t c_out, int64_t k, uint64_t seed) {
  ops::Conv2dAttrs a;
  a.padding = {k / 2, k / 2, k / 2, k / 2};
  a.strides = {1, 1};
  a.dilation = {1, 1};
  a.groups = 1;
  return ir::call(OpCode::Conv2d, {x, ir::constant(topitest::random(DType::f32, {c_out, c_in, k, k}, -0.3, 0.3, seed))}, a);
}

// A batch norm folded to a scale and a shift per channel, then ReLU (DenseNet's norm1 / relu1).
ir::Expr norm_relu(const ir::Expr& x, int64_t c, uint64_t seed) {
  ir::Expr scale = ir::constant(topitest::random(DType::f32, {1, c, 1, 1}, 0.5, 1.5, seed));
  ir::Expr shift = ir::constant(topitest::random(DType::f32, {1, c, 1, 1}, -0.5, 0.5, seed + 1));
  return ir::call(OpCode::Relu, {ir::call(OpCode::Add, {ir::call(OpCode::Mul, {x, scale}), shift})});
}

ir::Expr concat(const std::vector<ir::Expr>& xs) {
  ops::AxisAttrs a;
  a.axis = 1;
  return ir::call(OpCode::Concat, xs, a);
}

// A dense block: `layers` layers of growth `k` on `c0` input channels (each layer: its features
// concatenated, normalized, a 1x1 conv to 4k channels, normalized, a 3x3 conv to k), then the
// transition's concatenation, normalized and pooled by a 1x1 conv.
ir::Module dense_block(int64_t c0, int64_t k, int layers, int64_t plane) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 3, plane, plane}, DType::f32));
  std::vector<ir::Expr> features = {ir::call(OpCode::Relu, {conv(x, 3, c0, 3, 1)})};
  int64_t c = c0;
  for (int l = 0; l < layers; ++l) {
    const uint64_t s = 10 + 10 * static_cast<uint64_t>(l);
    ir::Expr b = norm_relu(conv(norm_relu(concat(features), c, s), c, 4 * k, 1, s + 2), 4 * k, s + 3);
    features.push_back(conv(b, 4 * k, k, 3, s + 5));
    c += k;
  }
  ir::Expr out = conv(norm_relu(concat(features), c, 90), c, c / 2, 1, 92);
  ir::Module m;
  m.functions["main"] = ir::function({x}, out);
  return m;
}

// Records that measured every conv and concatenation both plain and keeping NHWC (keeping the
// faster), as tune writes them: the block keeps NHWC through its concatenations.
native::Compiled compile_with_keeping_records(const ir::Module& m, const target::Target& t) {
  native::CompileOptions o;
  o.target = t;
  o.keep_all_layouts = true;
  o.chooser = [](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
    std::optional<strategy::Choice> c;
    const bool cat = anchor.op == OpCode::Concat;
    if (!cat && anchor.op != OpCode::Conv2d) return c;
    const std::string plain = cat ? "concatenate" : "conv2d.blocked", keeping = cat ? "concatenate.nhwc" : "conv2d.nhwc";
    c = strategy::Choice{plain, "", "record (the test's)", true, {}, {}, ""};
    c->costs = {{plain, "", 1.0, 0, false}, {keeping, "", 1.2, 0.8, false}};
    return c;
  };
  return native::compile_native(m, o);
}

TEST(NhwcConcat, RecordsKeepDenseBlocksNhwcThroughTheirConcatenations) {
  // Growth 16 (whole 16-lane vectors) and 8 (8-lane vectors on AVX-512 too). Counts are of
  // distinct kernels (a layer's 3x3 conv is one kernel for every layer).
  for (int64_t k : {16, 8})
    for (const target::Target& t : nativetest::host_and_avx2_targets()) {
      const ir::Module m = dense_block(32, k, 3, 10);
      native::Compiled nc = compile_with_keeping_records(m, t);
      const std::string what = "growth " + std::to_string(k) + " on " + t.str();
      // Every concatenation of several inputs reads them kept; each gives its result kept but,
      // with growth 8, the transition's: its 1x1 conv's 28 output channels are not whole vectors
      // (that conv stays NCHW).
      int kept_in = 0, kept_out = 0, nhwc_convs = 0;
      for (const strategy::Choice& c : nc.choices) {
        nhwc_convs += c.implementation == "conv2d.nhwc";
        if (c.implementation != "concatenate.nhwc") continue;
        kept_in += c.why.find("nhwc in=0,1") != std::string::npos;
        kept_out += c.why.find(" out") != std::string::npos;
      }
      EXPECT_EQ(kept_in, 3) << what;
      EXPECT_EQ(kept_out, k == 8 ? 3 : 4) << what;
      EXPECT_GE(nhwc_convs, 5) << what;
      nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, 3, 10, 10}, -1, 1, 7)}, what);
    }
}

TEST(NhwcConcat, WithoutRecordsConcatenationsStayNchw) {
  // No depthwise conv, no chain: DenseNet's block keeps its NCHW kernels (see register_concat_nhwc).
  const ir::Module m = dense_block(32, 16, 3, 10);
  native::Compiled nc = native::compile_native(m, native::CompileOptions{});
  for (const strategy::Choice& c : nc.choices) {
    EXPECT_NE(c.implementation, "concatenate.nhwc") << c.why;
    EXPECT_NE(c.implementation, "conv2d.nhwc") << c.why;
  }
}

// Every concatenation forced to concatenate.nhwc, as a record may choose it (without its costs:
// nothing keeps a layout), and every conv to conv_impl unless it is "".
native::Compiled compile_forcing_concat_nhwc(const ir::Module& m, const target::Target& t, std::string conv_impl) {
  native::CompileOptions o;
  o.target = t;
  o.chooser = [conv_impl](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
    std::optional<strategy::Choice> c;
    if (anchor.op == OpCode::Concat) c = strategy::Choice{"concatenate.nhwc", "", "forced by the test", true, {}, {}, ""};
    if (anchor.op == OpCode::Conv2d && !conv_impl.empty()) c = strategy::Choice{conv_impl, "", "forced by the test", true, {}, {}, ""};
    return c;
  };
  return native::compile_native(m, o);
}

TEST(NhwcConcat, ChannelsNotInWholeVectorsStayNchw) {
  // Growth 4: after the first layer no input of a concatenation is whole vectors of 8 channels.
  // concatenate.nhwc does not apply to those concatenations, forced or not: they run the NCHW
  // concatenation, and the choice says why.
  const ir::Module m = dense_block(32, 4, 2, 9);
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::Compiled nc = compile_forcing_concat_nhwc(m, t, "");
    // The first layer's concatenation (the stem's 32 channels alone) applies; the next two not.
    EXPECT_EQ(nativetest::count_choices(nc, "concatenate.nhwc"), 1) << t.str();
    EXPECT_EQ(nativetest::count_choices(nc, "concatenate"), 2) << t.str();
    for (const strategy::Choice& c : nc.choices) {
      if (c.implementation == "concatenate") {
        EXPECT_NE(c.why.find("does not apply"), std::string::npos) << c.why;
      }
    }
    nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, 3, 9, 9}, -1, 1, 9)}, "growth 4 on " + t.str());
  }
}

TEST(NhwcConcat, ForcedWithoutAChainMatchesReference) {
  // Every concatenation forced to concatenate.nhwc (as a record may choose) and every conv to an
  // NCHW implementation: its inputs and result plain, the result written by the plain schedule.
  const ir::Module m = dense_block(32, 16, 2, 7);
  for (const target::Target& t : nativetest::host_and_avx2_targets()) {
    native::Compiled nc = compile_forcing_concat_nhwc(m, t, "conv2d.rows");
    EXPECT_EQ(nativetest::count_choices(nc, "concatenate.nhwc"), 3) << t.str();
    for (const strategy::Choice& c : nc.choices) EXPECT_EQ(c.why.find("layout kept"), std::string::npos) << c.why;
    nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, 3, 7, 7}, -1, 1, 11)},
                                        "forced plain on " + t.str());
  }
}

}  // namespace
}  // namespace sy
