// The oneDNN integration through its lowering hook: the loop IR it makes of a region (golden: the
// region's input reordered to oneDNN's blocked layout once, the convolutions chained in it, one
// reorder back at the end), values against the reference executor at 1 and 2 threads (a
// ResNet-style block with a residual add, channels the block does not divide, GEMMs with their
// epilogues), what it declines, and an artifact that loads without the backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include <dnnl.hpp>

#include "api/compile.h"
#include "backends/onednn_hook/onednn_hook.h"
#include "backends/reference/executor.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "native/compile.h"
#include "native/hooked_regions.h"
#include "native/plan.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "partition/pipeline.h"
#include "runtime/artifact.h"
#include "runtime/compiled_model.h"
#include "target/host.h"
#include "target/target.h"
#include "tir/printer.h"
#include "tune/records.h"
#include "tune/task.h"

namespace sy {
namespace {

using ops::OpCode;

Tensor rnd(Shape s, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Tensor t(DType::f32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(g);
  return t;
}

ir::Module module_of(std::vector<ir::Expr> params, ir::Expr body) {
  ir::Module m;
  m.functions["main"] = ir::function(std::move(params), std::move(body));
  return m;
}

api::Compilation compile_with_hook(const ir::Module& m, const std::string& target = "cpu") {
  api::CompileSpec spec;
  spec.backends = {"onednn_hook"};
  spec.target = target;
  return api::compile(m, spec);
}

int hooked_kernels(const api::Compilation& c) {
  int n = 0;
  for (const strategy::Choice& ch : c.native->choices) n += ch.implementation == "onednn_hook";
  return n;
}

void expect_matches_reference(const api::Compilation& c, const ir::Module& m, const std::vector<Tensor>& inputs,
                              const std::string& what) {
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  for (int threads : {1, 2}) {
    std::vector<Tensor> got = c.model.run(inputs, threads);
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_EQ(got[o].shape(), want[o].shape()) << what;
      // An element is a sum of many products, so its rounding error scales with the output's
      // magnitude, not its own: one near zero by cancellation is as exact as its neighbours.
      double scale = 0;
      for (int64_t i = 0; i < want[o].numel(); ++i) scale = std::max(scale, std::abs(double(want[o].data<float>()[i])));
      int bad = 0;
      for (int64_t i = 0; i < want[o].numel() && bad < 5; ++i) {
        const double g = got[o].data<float>()[i], w = want[o].data<float>()[i];
        if (!(std::abs(g - w) <= 1e-4 + 1e-4 * std::abs(w) + 1e-6 * scale)) {
          ++bad;
          ADD_FAILURE() << what << ", " << threads << " threads, output " << o << " element " << i << ": " << g
                        << " vs reference " << w << " (largest |value| " << scale << ")";
        }
      }
    }
  }
}

ops::Conv2dAttrs conv_attrs(int64_t stride, int64_t pad) {
  ops::Conv2dAttrs a;
  a.strides = {stride, stride};
  a.padding = {pad, pad, pad, pad};
  a.dilation = {1, 1};
  return a;
}

ir::Expr conv(ir::Expr x, int64_t o, int64_t c, int64_t k, int64_t stride, uint32_t seed) {
  return ir::call(OpCode::Conv2d, {std::move(x), ir::constant(rnd({o, c, k, k}, seed)), ir::constant(rnd({o}, seed + 1))},
                  conv_attrs(stride, k / 2));
}

ir::Expr relu(ir::Expr x) { return ir::call(OpCode::Relu, {std::move(x)}); }

// A ResNet bottleneck: 1x1 -> 3x3 -> 1x1 with the residual add and relu, the input's 32
// channels also through a 1x1 projection (the shortcut).
ir::Module bottleneck(int64_t c, int64_t h) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, c, h, h}, DType::f32));
  ir::Expr a = relu(conv(x, 16, c, 1, 1, 10));
  ir::Expr b = relu(conv(a, 16, 16, 3, 1, 12));
  ir::Expr y = relu(ir::call(OpCode::Add, {conv(b, 64, 16, 1, 1, 14), conv(x, 64, c, 1, 1, 16)}));
  return module_of({x}, y);
}

TEST(OnednnHook, ABottleneckIsAKernelPerConvInTheBlockedLayout) {
  ir::Module m = bottleneck(32, 9);
  api::Compilation c = compile_with_hook(m);
  // The input to the blocked layout, four convolutions, the result back to NCHW.
  EXPECT_EQ(hooked_kernels(c), 6);
  EXPECT_EQ(c.native->executable->plan().kernels.size(), 6u);
  EXPECT_TRUE(c.model.modules.empty()) << "a hooked backend builds no runtime module";
  expect_matches_reference(c, m, {rnd({1, 32, 9, 9}, 30)}, "bottleneck");
  // The same for AVX2's block of 8 channels.
  expect_matches_reference(compile_with_hook(m, "cpu -isa=avx2"), m, {rnd({1, 32, 9, 9}, 31)}, "bottleneck, avx2");
}

// Two bottlenecks in a row: each block's last convolution accumulates onto its residual (oneDNN's
// sum post-op) in the residual's own storage, which nothing reads after: the plan gives the
// result the residual's offset, the kernel is built without restrict, and the values hold.
TEST(OnednnHook, AResidualIsAccumulatedInPlace) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 32, 8, 8}, DType::f32));
  auto block = [](ir::Expr in, uint32_t seed) {
    ir::Expr a = relu(conv(in, 16, 32, 1, 1, seed));
    ir::Expr b = relu(conv(a, 16, 16, 3, 1, seed + 2));
    return relu(ir::call(OpCode::Add, {conv(b, 32, 16, 1, 1, seed + 4), in}));
  };
  ir::Module m = module_of({x}, block(block(x, 100), 200));
  api::Compilation c = compile_with_hook(m);
  const native::Plan& p = c.native->executable->plan();
  int in_place = 0;
  for (const native::Call& call : p.calls) {
    const auto* f = p.kernels[static_cast<size_t>(call.function)]->as<ir::FunctionNode>();
    auto at = f->attrs.find(native::kInPlaceAttr);
    if (at == f->attrs.end()) continue;
    const native::Value& in = p.values[static_cast<size_t>(call.inputs[static_cast<size_t>(std::stoi(at->second))])];
    const native::Value& out = p.values[static_cast<size_t>(call.outputs[0])];
    in_place += in.kind == native::ValueKind::Storage && out.kind == native::ValueKind::Storage && in.offset == out.offset;
  }
  EXPECT_EQ(in_place, 2) << "each block's sum";
  if (c.native->generated_c.find("_body(int* restrict sy_fault") != std::string::npos) {  // C (not a codegen hook's text)
    EXPECT_NE(c.native->generated_c.find("(int* restrict sy_fault, float* p0,"), std::string::npos)
        << "an in-place kernel's parameters are not restrict";
  }
  expect_matches_reference(c, m, {rnd({1, 32, 8, 8}, 300)}, "two bottlenecks");
}

// A ResNet stem: conv 7x7/2, relu, max pool 3x3/2 (padded), a 1x1 conv, global average pooling.
// The poolings run in oneDNN on the blocked layout (no reorder around them); every kernel is the
// hook's; values at 1 and 2 threads, for AVX-512's block and AVX2's.
TEST(OnednnHook, PoolingsKeepTheBlockedLayout) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 3, 37, 37}, DType::f32));
  ops::Pool2dAttrs mp;
  mp.kernel = {3, 3};
  mp.strides = {2, 2};
  mp.padding = {1, 1, 1, 1};
  ir::Expr stem = relu(ir::call(OpCode::Conv2d, {x, ir::constant(rnd({32, 3, 7, 7}, 110)), ir::constant(rnd({32}, 111))},
                                conv_attrs(2, 3)));
  ir::Expr pooled = ir::call(OpCode::MaxPool2d, {stem}, std::make_shared<const ops::Pool2dAttrs>(mp));
  ir::Expr y = ir::call(OpCode::GlobalAvgPool2d, {relu(conv(pooled, 48, 32, 1, 1, 112))});
  ir::Module m = module_of({x}, y);
  for (const char* t : {"cpu", "cpu -isa=avx2"}) {
    api::Compilation c = compile_with_hook(m, t);
    EXPECT_EQ(hooked_kernels(c), static_cast<int>(c.native->executable->plan().kernels.size())) << t << ": every kernel the hook's";
    EXPECT_NE(c.native->generated_c.find("sy_onednn_pool2d"), std::string::npos) << t;
    expect_matches_reference(c, m, {rnd({1, 3, 37, 37}, 113)}, std::string("stem and pools, ") + t);
  }
}

TEST(OnednnHook, ChannelsTheBlockDoesNotDivideStayPlain) {
  // A stem (3 channels in), 24 channels (not a multiple of 16), a strided 3x3 and clip (ReLU6).
  ir::Expr x = ir::var("x", ir::tensor_type({2, 3, 17, 17}, DType::f32));
  ops::ClipAttrs six;
  six.min = 0;
  six.max = 6;
  ir::Expr a = relu(conv(x, 24, 3, 3, 2, 40));
  ir::Expr y = ir::call(OpCode::Clip, {conv(a, 32, 24, 3, 2, 42)}, std::make_shared<const ops::ClipAttrs>(six));
  ir::Module m = module_of({x}, y);
  expect_matches_reference(compile_with_hook(m), m, {rnd({2, 3, 17, 17}, 44)}, "stem");
}

// EfficientNet's projections to 24 and 40 channels and the expansions from them: a blocked data
// with an NCHW result (or the reverse) is a pair oneDNN 2.6 runs with its reference loop (220 ms
// per call on a 56x56 map, 1.5 s per EfficientNet-B0 inference). The layouts chosen have a JIT
// kernel, seen in oneDNN's own log of the primitives it runs, and the values hold.
TEST(OnednnHook, MixedChannelCountsNeverRunTheReferenceLoop) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 32, 12, 12}, DType::f32));
  ir::Expr proj = conv(x, 20, 32, 1, 1, 120);                   // blocked 32 -> 20 (no block divides it)
  ir::Expr expand = relu(conv(proj, 160, 20, 1, 1, 122));       // 20 -> blocked 160
  ir::Expr y = ir::call(OpCode::Add, {conv(expand, 20, 160, 1, 1, 124), proj});  // 160 -> 20, residual
  ir::Module m = module_of({x}, y);
  for (const char* t : {"cpu", "cpu -isa=avx2"}) {
    api::Compilation c = compile_with_hook(m, t);
    // Every convolution the hook's. The ReLU after 20 -> 160 is not: oneDNN has no kernel for an
    // NCHW data with a blocked result, so that result is NCHW in the blocked layout, where the
    // rules decline an activation post-op (slow in oneDNN). The rules judge by the blocked layout
    // even where the region then runs NHWC (they see a composite, not its region).
    const std::vector<std::string>& names = c.native->executable->plan().kernel_names;
    EXPECT_EQ(std::count_if(names.begin(), names.end(), [](const std::string& k) { return k.find("onednn_hook") == std::string::npos; }), 1) << t;
    EXPECT_EQ(std::count_if(names.begin(), names.end(), [](const std::string& k) { return k.find("_nn_relu") != std::string::npos; }), 1) << t;
    EXPECT_GE(hooked_kernels(c), 3) << t;
    ::testing::internal::CaptureStdout();
    dnnl::set_verbose(1);
    c.model.run({rnd({1, 32, 12, 12}, 126)}, 2);
    dnnl::set_verbose(0);
    const std::string log = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(log.find("exec,cpu,convolution"), std::string::npos) << t << ": oneDNN logged no primitive";
    EXPECT_EQ(log.find("ref:"), std::string::npos) << t << ": a reference loop ran:\n" << log;
    expect_matches_reference(c, m, {rnd({1, 32, 12, 12}, 126)}, std::string("mixed channel counts, ") + t);
  }
}

// SiLU as exporters write it, x * sigmoid(x) in either order: oneDNN's swish post-op on a blocked
// result (on NCHW, oneDNN's GEMM-based convolution applies it 15x slower than the native kernel
// after it: the rules decline it there). A multiply of two different values is not SiLU.
TEST(OnednnHook, SiluIsTheConvolutionsPostOp) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 16, 9, 9}, DType::f32));
  ir::Expr a = conv(x, 32, 16, 3, 1, 130);
  ir::Expr sa = ir::call(OpCode::Mul, {a, ir::call(OpCode::Sigmoid, {a})});
  ir::Expr b = ir::call(OpCode::Add, {conv(sa, 32, 32, 1, 1, 132), sa});
  ir::Expr y = ir::call(OpCode::Mul, {ir::call(OpCode::Sigmoid, {b}), b});
  ir::Module m = module_of({x}, y);
  api::Compilation c = compile_with_hook(m);
  for (const std::string& k : c.native->executable->plan().kernel_names)
    EXPECT_EQ(k.find("multiply"), std::string::npos) << k << ": SiLU is the convolution's post-op";
  expect_matches_reference(c, m, {rnd({1, 16, 9, 9}, 134)}, "conv+SiLU, conv+add+SiLU");

  ir::Expr z = ir::var("z", ir::tensor_type({1, 16, 9, 9}, DType::f32));
  ir::Expr cz = conv(z, 16, 16, 1, 1, 136);
  ir::Module other = module_of({z}, ir::call(OpCode::Mul, {cz, ir::call(OpCode::Sigmoid, {z})}));
  api::Compilation co = compile_with_hook(other);
  bool native_sigmoid = false;
  for (const std::string& k : co.native->executable->plan().kernel_names) native_sigmoid |= k.find("multiply") != std::string::npos;
  EXPECT_TRUE(native_sigmoid) << "x * sigmoid(z) stays native";
  expect_matches_reference(co, other, {rnd({1, 16, 9, 9}, 138)}, "x * sigmoid(z)");
}

TEST(OnednnHook, GemmsWithTheirEpilogues) {
  ir::Expr x = ir::var("x", ir::tensor_type({5, 40}, DType::f32));
  ops::GeluAttrs erf;
  ir::Expr d = ir::call(OpCode::Gelu, {ir::call(OpCode::Dense, {x, ir::constant(rnd({24, 40}, 50)), ir::constant(rnd({24}, 51))})},
                        std::make_shared<const ops::GeluAttrs>(erf));
  ir::Expr y = relu(ir::call(OpCode::Add, {ir::call(OpCode::Dense, {d, ir::constant(rnd({8, 24}, 52))}), ir::constant(rnd({8}, 53))}));
  ir::Module m = module_of({x}, y);
  api::Compilation c = compile_with_hook(m);
  EXPECT_EQ(hooked_kernels(c), 2) << "a kernel per GEMM";
  expect_matches_reference(c, m, {rnd({5, 40}, 54)}, "dense+bias+gelu, dense+add+relu");
  // Attention's batched matmul of two activations.
  ir::Expr q = ir::var("q", ir::tensor_type({2, 7, 16}, DType::f32));
  ir::Expr k = ir::var("k", ir::tensor_type({2, 16, 7}, DType::f32));
  ir::Module mm = module_of({q, k}, ir::call(OpCode::MatMul, {q, k}));
  expect_matches_reference(compile_with_hook(mm), mm, {rnd({2, 7, 16}, 55), rnd({2, 16, 7}, 56)}, "batched matmul");
  // ONNX MatMul by a weight [K, N] with a bias add, over a batch of rows (a transformer's layers).
  ir::Expr h = ir::var("h", ir::tensor_type({2, 7, 16}, DType::f32));
  ir::Module rows = module_of({h}, ir::call(OpCode::Add, {ir::call(OpCode::MatMul, {h, ir::constant(rnd({16, 24}, 57))}),
                                                           ir::constant(rnd({24}, 58))}));
  api::Compilation cr = compile_with_hook(rows);
  EXPECT_EQ(hooked_kernels(cr), 1);
  expect_matches_reference(cr, rows, {rnd({2, 7, 16}, 59)}, "matmul by a weight, batch of rows");
}

// A transformer's residual connection after a GEMM's bias (the encoder's FFN output): oneDNN's
// binary add post-op, one kernel, either operand order; a residual that would broadcast is not
// the post-op (the add stays a loop of its own).
TEST(OnednnHook, AResidualAfterTheGemmsBiasIsItsPostOp) {
  ir::Expr h = ir::var("h", ir::tensor_type({2, 7, 16}, DType::f32));
  ir::Expr g = ir::call(OpCode::Add, {ir::call(OpCode::MatMul, {h, ir::constant(rnd({16, 16}, 94))}), ir::constant(rnd({16}, 95))});
  for (bool gemm_first : {true, false}) {
    ir::Module m = module_of({h}, ir::call(OpCode::Add, gemm_first ? std::vector<ir::Expr>{g, h} : std::vector<ir::Expr>{h, g}));
    api::Compilation c = compile_with_hook(m);
    EXPECT_EQ(hooked_kernels(c), 1);
    EXPECT_EQ(c.native->executable->plan().kernels.size(), 1u) << "the residual add is the GEMM's post-op";
    bool fused = false;
    for (const partition::NodeDecision& d : c.partition.report.decisions) fused |= d.node == "composite onednn_hook.gemm_bias_add";
    EXPECT_TRUE(fused);
    expect_matches_reference(c, m, {rnd({2, 7, 16}, 96)}, gemm_first ? "matmul+bias+residual" : "residual+(bias+matmul)");
  }
  ir::Expr row = ir::var("row", ir::tensor_type({16}, DType::f32));
  ir::Module broadcast = module_of({h, row}, ir::call(OpCode::Add, {g, row}));
  api::Compilation cb = compile_with_hook(broadcast);
  EXPECT_EQ(cb.native->executable->plan().kernels.size(), 2u) << "the GEMM, then the broadcast add";
  expect_matches_reference(cb, broadcast, {rnd({2, 7, 16}, 97), rnd({16}, 98)}, "matmul+bias, then a broadcast add");
}

// GELU as ONNX exports of PyTorch spell it, after a GEMM with its bias: the GEMM's post-op, one
// kernel; when the GEMM's result is read elsewhere too, a loop after the call.
TEST(OnednnHook, AnErfGeluIsTheGemmsPostOp) {
  auto scalar = [](float v) {
    Tensor t(DType::f32, {});
    t.data<float>()[0] = v;
    return ir::constant(t);
  };
  auto erf_gelu = [&](ir::Expr x) {
    ir::Expr e = ir::call(OpCode::Erf, {ir::call(OpCode::Div, {x, scalar(1.4142135f)})});
    return ir::call(OpCode::Mul, {ir::call(OpCode::Mul, {x, ir::call(OpCode::Add, {e, scalar(1.0f)})}), scalar(0.5f)});
  };
  ir::Expr h = ir::var("h", ir::tensor_type({2, 7, 16}, DType::f32));
  ir::Expr g = ir::call(OpCode::Add, {ir::call(OpCode::MatMul, {h, ir::constant(rnd({16, 24}, 90))}), ir::constant(rnd({24}, 91))});
  ir::Module m = module_of({h}, erf_gelu(g));
  api::Compilation c = compile_with_hook(m);
  EXPECT_EQ(hooked_kernels(c), 1) << "the GEMM and its GELU, one kernel";
  EXPECT_EQ(c.native->executable->plan().kernels.size(), 1u);
  expect_matches_reference(c, m, {rnd({2, 7, 16}, 92)}, "matmul+bias+erf gelu");
  // The GEMM's result also a result of the model: the GELU is not its post-op.
  ir::Module both = module_of({h}, ir::tuple({erf_gelu(g), g}));
  expect_matches_reference(compile_with_hook(both), both, {rnd({2, 7, 16}, 93)}, "gelu and the gemm both results");
}

TEST(OnednnHook, DeclinesWhatItCannotRunWithAReason) {
  // An add that broadcasts a per-channel operand over the conv's result is not a sum post-op.
  ir::Expr x = ir::var("x", ir::tensor_type({1, 16, 8, 8}, DType::f32));
  ir::Expr y = ir::call(OpCode::Add, {conv(x, 16, 16, 1, 1, 60), ir::constant(rnd({1, 16, 1, 1}, 62))});
  ir::Module m = module_of({x}, y);
  api::Compilation c = compile_with_hook(m);
  std::string reasons;
  for (const partition::NodeDecision& d : c.partition.report.decisions)
    for (const auto& [backend, why] : d.rejections) reasons += backend + ": " + why + "\n";
  EXPECT_NE(reasons.find("onednn_hook"), std::string::npos) << reasons;
  EXPECT_EQ(hooked_kernels(c), 3) << "the conv alone, and its layout changes";
  expect_matches_reference(c, m, {rnd({1, 16, 8, 8}, 64)}, "conv with a broadcast add");
}

TEST(OnednnHook, IrAfterTheHook) {
  // conv+bias+relu then conv+bias+add(the first's result)+relu over 32 channels, as one kernel:
  // the input reordered once to the blocked layout (too little work for NHWC: TheRegionsLayout),
  // both calls on blocked buffers (the add's operand too, as post-op 2: kind 3, buffer 3), the
  // result reordered to NCHW; both reorders parallel over rows of blocks (the channels innermost).
  ir::Expr x = ir::var("x", ir::tensor_type({1, 32, 4, 4}, DType::f32));
  ir::Expr a = relu(conv(x, 32, 32, 1, 1, 70));
  ir::Expr y = relu(ir::call(OpCode::Add, {conv(a, 32, 32, 1, 1, 72), a}));
  partition::PartitionOptions po = api::partition_options({"onednn_hook"}, {});
  partition::PartitionResult pr = partition::partition_module(module_of({x}, y), po);
  ir::Module hooked = native::take_hooked_regions(native::fuse_for_native(pr.module), runtime::lowering_hooks(po.backends));
  auto* call = hooked.main().body->as<ir::CallNode>();
  ASSERT_TRUE(call && call->callee->as<ir::FunctionNode>());
  const backends::LoweringHook* hook = po.backends[0]->lowering_hook();
  ASSERT_NE(hook, nullptr);
  tir::PrimFunc f = hook->lower(*call->callee->as<ir::FunctionNode>(), "k0_onednn_hook", target::parse("cpu -isa=avx512"));
  EXPECT_EQ(tir::print_func(f), R"(func k0_onednn_hook(p0: float32[1, 32, 4, 4], p1: float32[32, 32, 1, 1], p2: float32[32], p3: float32[32, 32, 1, 1], p4: float32[32], to_nchw1: float32[1, 32, 4, 4]) {
  allocate to_blocked0: float32[1, 2, 4, 4, 16] {
    allocate conv0: float32[1, 2, 4, 4, 16] {
      allocate conv1: float32[1, 2, 4, 4, 16] {
        parallel for i.j.fused.k.fused in [0, 8) {
          for l in [0, 4) {
            for m.inner in [0, 16) {
              to_blocked0[0, i.j.fused.k.fused / 4, i.j.fused.k.fused % 4, l, m.inner] = p0[0, i.j.fused.k.fused / 4 * 16 + m.inner, i.j.fused.k.fused % 4, l]
            }
          }
        }
        call stateful sy_onednn_conv2d(to_blocked0, p1, p2, conv0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0)
        call stateful sy_onednn_conv2d(conv0, p3, p4, conv0, conv1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 2, 0, 0, 3, 3, 0, 1, 0, 0)
        parallel for i.j.outer.fused.k.fused in [0, 8) {
          for l_1 in [0, 4) {
            for j.inner in [0, 16) {
              to_nchw1[0, i.j.outer.fused.k.fused / 4 * 16 + j.inner, i.j.outer.fused.k.fused % 4, l_1] = conv1[0, i.j.outer.fused.k.fused / 4, i.j.outer.fused.k.fused % 4, l_1, j.inner]
            }
          }
        }
      }
    }
  }
}
)");
  // AVX2: channel-blocked by 8, [1, 4, 4, 4, 8].
  const std::string avx2 = tir::print_func(hook->lower(*call->callee->as<ir::FunctionNode>(), "k0", target::parse("cpu -isa=avx2")));
  EXPECT_NE(avx2.find("allocate conv0: float32[1, 4, 4, 4, 8]"), std::string::npos) << avx2;
}

// NHWC (oneDNN's brgemm convolutions) for a region on AVX-512 that holds no grouped convolution
// and does enough work per byte crossing its edge; the blocked layout otherwise, on AVX2, and for
// the rules (no region). The NHWC region's buffers are [N, 1, H, W, C] and its values hold.
TEST(OnednnHook, TheRegionsLayout) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 128, 8, 8}, DType::f32));
  // Two 3x3 convolutions over 128 channels: 37.7 MFLOP for 64 KB in and out (575 per byte).
  ir::Module heavy = module_of({x}, relu(conv(relu(conv(x, 128, 128, 3, 1, 150)), 128, 128, 3, 1, 152)));
  ir::Module light = module_of({x}, relu(conv(x, 32, 128, 1, 1, 154)));  // 8 FLOP per byte
  ops::Conv2dAttrs dw = conv_attrs(1, 1);
  dw.groups = 128;
  ir::Module depthwise = module_of(
      {x}, relu(conv(relu(conv(ir::call(OpCode::Conv2d, {x, ir::constant(rnd({128, 1, 3, 3}, 156))}, dw), 128, 128, 3, 1, 158)),
                     128, 128, 3, 1, 160)));
  partition::PartitionOptions po = api::partition_options({"onednn_hook"}, {});
  std::vector<ir::Expr> keep;  // the regions' functions
  auto region = [&](const ir::Module& m) -> const ir::FunctionNode* {  // as the hook gets it (IrAfterTheHook)
    partition::PartitionResult pr = partition::partition_module(m, po);
    ir::Module hooked = native::take_hooked_regions(native::fuse_for_native(pr.module), runtime::lowering_hooks(po.backends));
    auto* call = hooked.main().body->as<ir::CallNode>();
    if (!call || !call->callee->as<ir::FunctionNode>()) return nullptr;
    keep.push_back(call->callee);
    return call->callee->as<ir::FunctionNode>();
  };
  const target::Target avx512 = target::parse("cpu -isa=avx512"), avx2 = target::parse("cpu -isa=avx2");
  const ir::FunctionNode *h = region(heavy), *l = region(light), *g = region(depthwise);
  ASSERT_TRUE(h && l && g);
  using backends::onednn_hook::layout_for;
  EXPECT_TRUE(layout_for(avx512, h).nhwc);
  EXPECT_FALSE(layout_for(avx512, l).nhwc) << "too little work for NHWC's reorders";
  EXPECT_FALSE(layout_for(avx512, g).nhwc) << "a depthwise convolution keeps it blocked";
  EXPECT_FALSE(layout_for(avx2, h).nhwc);
  EXPECT_EQ(layout_for(avx2, h).lanes, 8);
  EXPECT_FALSE(layout_for(avx512).nhwc) << "the rules ask about the blocked layout";
  const std::string ir = tir::print_func(po.backends[0]->lowering_hook()->lower(*h, "k", avx512));
  EXPECT_NE(ir.find("conv0: float32[1, 1, 8, 8, 128]"), std::string::npos) << ir;
  // Run where this CPU can: the NHWC layout is AVX-512's; an AVX2 CPU checks its own layout.
  const std::string runs_here = target::host().isa() == target::IsaLevel::Avx512 ? "cpu -isa=avx512" : "cpu";
  for (const ir::Module* m : {&heavy, &depthwise})
    expect_matches_reference(compile_with_hook(*m, runs_here), *m, {rnd({1, 128, 8, 8}, 162)}, "heavy or depthwise");
}

TEST(OnednnHook, TheSplitRegion) {
  // The region of IrAfterTheHook split for AVX-512: a piece per layout change at the region's
  // edges and per composite, each a primitive function the hook lowers (LoweredBy) in the
  // region's layout (OnednnHookLayout), the blocked tensors [1, 2, 4, 4, 16] between them in the
  // native plan; the pieces' bodies say what their blocked parameters and results mean.
  ir::Expr x = ir::var("x", ir::tensor_type({1, 32, 4, 4}, DType::f32));
  ir::Expr a = relu(conv(x, 32, 32, 1, 1, 70));
  ir::Expr y = relu(ir::call(OpCode::Add, {conv(a, 32, 32, 1, 1, 72), a}));
  partition::PartitionOptions po = api::partition_options({"onednn_hook"}, {});
  partition::PartitionResult pr = partition::partition_module(module_of({x}, y), po);
  const target::Target avx512 = target::parse("cpu -isa=avx512");
  ir::Module split = native::take_hooked_regions(native::fuse_for_native(pr.module), runtime::lowering_hooks(po.backends),
                                                 runtime::region_splits(po.backends), &avx512);
  ir::PrintOptions no_weights;
  no_weights.constant_data = false;
  const std::string graph = ir::print_module(split, no_weights);
  EXPECT_EQ(graph.substr(0, graph.find("constants {")), R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 32, 4, 4), float32]) -> Tensor[(1, 32, 4, 4), float32] {
  %0 = fn (%x: Tensor[(1, 32, 4, 4), float32]) -> Tensor[(1, 2, 4, 4, 16), float32] attrs {Compiler="onednn_hook", LoweredBy="onednn_hook", OnednnHookLayout="blocked", Primitive="1"} {
    %1 = reshape(%x, newshape=[1, 2, 16, 4, 4]);
    transpose(%1, perm=[0, 1, 3, 4, 2])
  };
  %2 = %0(%x);
  %3 = fn (%x0: Tensor[(1, 2, 4, 4, 16), float32], %w0: Tensor[(32, 32, 1, 1), float32], %w1: Tensor[(32,), float32]) -> Tensor[(1, 2, 4, 4, 16), float32] attrs {Compiler="onednn_hook", LoweredBy="onednn_hook", OnednnHookLayout="blocked", Primitive="1"} {
    %4 = transpose(%x0, perm=[0, 1, 4, 2, 3]);
    %5 = reshape(%4, newshape=[1, 32, 4, 4]);
    %6 = fn (%p0: Tensor[(1, 32, 4, 4), float32], %p1: Tensor[(32, 32, 1, 1), float32], %p2: Tensor[(32,), float32]) -> Tensor[(1, 32, 4, 4), float32] attrs {Composite="onednn_hook.conv_act"} {
      %7 = nn.conv2d(%p0, %p1, %p2, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);
      nn.relu(%7)
    };
    %8 = %6(%5, %w0, %w1);
    %9 = reshape(%8, newshape=[1, 2, 16, 4, 4]);
    transpose(%9, perm=[0, 1, 3, 4, 2])
  };
  %10 = %3(%2, @c0, @c1);
  %11 = fn (%x0: Tensor[(1, 2, 4, 4, 16), float32], %w0: Tensor[(32, 32, 1, 1), float32], %w1: Tensor[(32,), float32]) -> Tensor[(1, 2, 4, 4, 16), float32] attrs {Compiler="onednn_hook", LoweredBy="onednn_hook", OnednnHookLayout="blocked", Primitive="1"} {
    %12 = transpose(%x0, perm=[0, 1, 4, 2, 3]);
    %13 = reshape(%12, newshape=[1, 32, 4, 4]);
    %14 = fn (%p0: Tensor[(1, 32, 4, 4), float32], %p1: Tensor[(32, 32, 1, 1), float32], %p2: Tensor[(32,), float32]) -> Tensor[(1, 32, 4, 4), float32] attrs {Composite="onednn_hook.conv_add_act"} {
      %15 = nn.conv2d(%p0, %p1, %p2, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);
      %16 = add(%15, %p0);
      nn.relu(%16)
    };
    %17 = %14(%13, %w0, %w1);
    %18 = reshape(%17, newshape=[1, 2, 16, 4, 4]);
    transpose(%18, perm=[0, 1, 3, 4, 2])
  };
  %19 = %11(%10, @c2, @c3);
  %20 = fn (%x: Tensor[(1, 2, 4, 4, 16), float32]) -> Tensor[(1, 32, 4, 4), float32] attrs {Compiler="onednn_hook", LoweredBy="onednn_hook", OnednnHookLayout="blocked", Primitive="1"} {
    %21 = transpose(%x, perm=[0, 1, 4, 2, 3]);
    reshape(%21, newshape=[1, 32, 4, 4])
  };
  %20(%19)
}
)");
  // Each piece lowers to one primitive call on the blocked buffers, or to one reorder loop.
  const backends::LoweringHook* hook = po.backends[0]->lowering_hook();
  int calls = 0;
  for (const ir::Expr& e : ir::post_order(split.main().body)) {
    auto* c = e->as<ir::CallNode>();
    if (!c || !c->callee || !c->callee->as<ir::FunctionNode>()) continue;
    const std::string k = tir::print_func(hook->lower(*c->callee->as<ir::FunctionNode>(), "k", avx512));
    calls += k.find("call stateful sy_onednn_conv2d") != std::string::npos;
  }
  EXPECT_EQ(calls, 2);
}

// With tuning records, the native kernels beside the hook's take theirs and the hook's kernels
// are the hook's (their functions hold the weights as constants, which no workload key names:
// records and the hook together failed with "workload_key: unexpected node in a fused function").
TEST(OnednnHook, RecordsChooseTheNativeKernelsBesideTheHook) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 16, 8, 8}, DType::f32));
  ops::Pool2dAttrs avg;  // DenseNet's transition pooling: not one of the hook's ops
  avg.kernel = {2, 2};
  avg.strides = {2, 2};
  ir::Expr y = ir::call(OpCode::AvgPool2d, {relu(conv(x, 16, 16, 3, 1, 90))}, std::make_shared<const ops::Pool2dAttrs>(avg));
  ir::Module m = module_of({x}, y);
  // A record for the native pooling, its last implementation with its knobs' defaults.
  const target::Target& t = target::host();
  tune::Record r;
  for (const tune::Task& task : tune::extract_tasks(m, t))
    if (task.op == "nn.avg_pool2d") {
      r.workload = task.key;
      r.implementation = task.implementations.back();
    }
  ASSERT_FALSE(r.workload.empty()) << "no native task for the pooling";
  r.op = "nn.avg_pool2d";
  r.target = t.str();
  r.target_key = t.key();
  r.median_ms = 0.01;
  r.validators = tune::current_validators();
  const std::string path = ::testing::TempDir() + "/onednn_hook_records.jsonl";
  tune::write_records(path, {r});
  api::CompileSpec spec;
  spec.backends = {"onednn_hook"};
  spec.records = path;
  api::Compilation c = api::compile(m, spec);
  std::remove(path.c_str());
  ASSERT_TRUE(c.native);
  EXPECT_GE(hooked_kernels(c), 1);
  int by_record = 0;
  for (const strategy::Choice& ch : c.native->choices) {
    EXPECT_EQ(ch.by_hook, ch.implementation == "onednn_hook") << ch.implementation;
    if (ch.from_record) {
      ++by_record;
      EXPECT_EQ(ch.implementation, r.implementation);
    }
  }
  EXPECT_EQ(by_record, 1) << c.records;
  EXPECT_NE(c.records.find("lowered by target hooks"), std::string::npos) << c.records;
  expect_matches_reference(c, m, {rnd({1, 16, 8, 8}, 94)}, "records beside the hook");
}

TEST(OnednnHook, ArtifactLoadsWithoutTheBackend) {
  ir::Module m = bottleneck(32, 6);
  api::Compilation c = compile_with_hook(m);
  const std::string path = ::testing::TempDir() + "/onednn_hook.sya";
  runtime::save_artifact(c.model, path);
  runtime::CompiledModel back = runtime::load_artifact(path, {});  // no backend at all
  std::vector<Tensor> in{rnd({1, 32, 6, 6}, 80)};
  std::vector<Tensor> want = c.model.run(in, 2), got = back.run(in, 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(0, std::memcmp(got[0].raw(), want[0].raw(), static_cast<size_t>(want[0].nbytes())));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sy
