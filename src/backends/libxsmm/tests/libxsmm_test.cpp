// The libxsmm integration through its lowering hook: what it claims, the loop IR its hook makes
// (golden), values against the reference executor (tails in every dimension, batches, bias and
// activations, 1 and 2 threads), planned memory, artifacts that load without the backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "api/compile.h"
#include "backends/reference/executor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "runtime/artifact.h"
#include "ir/printer.h"
#include "native/compile.h"
#include "partition/pipeline.h"
#include "runtime/compiled_model.h"
#include "target/host.h"
#include "tir/printer.h"

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

api::Compilation compile_with_libxsmm(const ir::Module& m) {
  api::CompileSpec spec;
  spec.backends = {"libxsmm"};
  return api::compile(m, spec);
}

int hooked_kernels(const api::Compilation& c);

// Compiled with the libxsmm backend, `hooked` kernels lowered by its hook, the reference's values.
void expect_matches_reference(const ir::Module& m, const std::vector<Tensor>& inputs, const std::string& what, int hooked = 1) {
  api::Compilation c = compile_with_libxsmm(m);
  EXPECT_EQ(hooked_kernels(c), hooked) << what;
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  for (int threads : {1, 2}) {
    std::vector<Tensor> got = c.model.run(inputs, threads);
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_EQ(got[o].shape(), want[o].shape()) << what;
      int bad = 0;
      for (int64_t i = 0; i < want[o].numel() && bad < 5; ++i) {
        const double g = got[o].data<float>()[i], w = want[o].data<float>()[i];
        if (!(std::abs(g - w) <= 1e-4 + 1e-4 * std::abs(w))) {
          ++bad;
          ADD_FAILURE() << what << ", " << threads << " threads, output " << o << " element " << i << ": " << g
                        << " vs reference " << w;
        }
      }
    }
  }
}

// The number of kernels the hook lowered (their choice names the backend).
int hooked_kernels(const api::Compilation& c) {
  int n = 0;
  for (const strategy::Choice& ch : c.native->choices) n += ch.implementation == "libxsmm";
  return n;
}

ir::Expr gelu(ir::Expr x, const char* approximate) {
  ops::GeluAttrs a;
  a.approximate = approximate;
  return ir::call(OpCode::Gelu, {std::move(x)}, std::make_shared<const ops::GeluAttrs>(a));
}

TEST(LibxsmmHook, DenseBiasReluIsOneHookedKernel) {
  // M, N and K each with a tail of the extern's blocks (32, 64, 256).
  ir::Expr x = ir::var("x", ir::tensor_type({37, 300}, DType::f32));
  ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Dense, {x, ir::constant(rnd({70, 300}, 1)), ir::constant(rnd({70}, 2))})});
  ir::Module m = module_of({x}, y);
  api::Compilation c = compile_with_libxsmm(m);
  EXPECT_EQ(hooked_kernels(c), 1);
  EXPECT_EQ(c.native->executable->plan().kernels.size(), 1u);
  EXPECT_TRUE(c.model.modules.empty()) << "a hooked backend builds no runtime module";
  EXPECT_NE(c.native->generated_c.find("sy_libxsmm_gemm"), std::string::npos);
  expect_matches_reference(m, {rnd({37, 300}, 3)}, "dense+bias+relu");
}

TEST(LibxsmmHook, MatmulForms) {
  {  // the encoder's form: matmul by a constant, then add(bias, .), then gelu; 3-d data
    ir::Expr x = ir::var("x", ir::tensor_type({2, 33, 96}, DType::f32));
    ir::Expr y = gelu(ir::call(OpCode::Add, {ir::constant(rnd({130}, 4)), ir::call(OpCode::MatMul, {x, ir::constant(rnd({96, 130}, 5))})}), "none");
    expect_matches_reference(module_of({x}, y), {rnd({2, 33, 96}, 6)}, "matmul const + bias + gelu");
  }
  {  // attention: both operands are activations, batched
    ir::Expr a = ir::var("a", ir::tensor_type({3, 40, 65}, DType::f32));
    ir::Expr b = ir::var("b", ir::tensor_type({3, 65, 17}, DType::f32));
    expect_matches_reference(module_of({a, b}, ir::call(OpCode::MatMul, {a, b})), {rnd({3, 40, 65}, 7), rnd({3, 65, 17}, 8)},
                             "batch matmul");
  }
  {  // 4-d batch, one B for all (2-d), tanh gelu, a bias of shape [1, 1, N]
    ir::Expr a = ir::var("a", ir::tensor_type({2, 3, 9, 520}, DType::f32));
    ir::Expr b = ir::var("b", ir::tensor_type({520, 70}, DType::f32));
    ir::Expr y = gelu(ir::call(OpCode::Add, {ir::call(OpCode::MatMul, {a, b}), ir::constant(rnd({1, 1, 70}, 9))}), "tanh");
    expect_matches_reference(module_of({a, b}, y), {rnd({2, 3, 9, 520}, 10), rnd({520, 70}, 11)}, "4-d matmul, shared B");
  }
  {  // two chained GEMMs in one region: the intermediate is the kernel's own
    ir::Expr x = ir::var("x", ir::tensor_type({16, 64}, DType::f32));
    ir::Expr h = ir::call(OpCode::Relu, {ir::call(OpCode::Dense, {x, ir::constant(rnd({128, 64}, 12)), ir::constant(rnd({128}, 13))})});
    ir::Expr y = ir::call(OpCode::Dense, {h, ir::constant(rnd({10, 128}, 14))});
    expect_matches_reference(module_of({x}, y), {rnd({16, 64}, 15)}, "two GEMMs");
  }
}

// x * (erf(x / sqrt 2) + 1) * 0.5, as PyTorch's GELU is exported to ONNX.
ir::Expr gelu_erf_chain(const ir::Expr& x) {
  auto scalar = [](float v) {
    Tensor t(DType::f32, {});
    t.data<float>()[0] = v;
    return ir::constant(t);
  };
  ir::Expr e = ir::call(OpCode::Erf, {ir::call(OpCode::Div, {x, scalar(1.4142135f)})});
  return ir::call(OpCode::Mul, {ir::call(OpCode::Mul, {x, ir::call(OpCode::Add, {e, scalar(1.0f)})}), scalar(0.5f)});
}

TEST(LibxsmmHook, ErfGeluIsTheGemmsEpilogue) {
  {  // the encoder's feed-forward: matmul + bias, GELU as erf ops, matmul + bias; one kernel, the
     // GELU computed in the first GEMM's epilogue
    ir::Expr x = ir::var("x", ir::tensor_type({1, 20, 96}, DType::f32));
    ir::Expr h = ir::call(OpCode::Add, {ir::constant(rnd({160}, 30)), ir::call(OpCode::MatMul, {x, ir::constant(rnd({96, 160}, 31))})});
    ir::Expr y = ir::call(OpCode::Add, {ir::constant(rnd({96}, 32)), ir::call(OpCode::MatMul, {gelu_erf_chain(h), ir::constant(rnd({160, 96}, 33))})});
    ir::Module m = module_of({x}, y);
    api::Compilation c = compile_with_libxsmm(m);
    ASSERT_EQ(c.native->executable->plan().kernels.size(), 1u);
    EXPECT_NE(c.native->generated_c.find("1,2,1\\nsy_libxsmm_gemm"), std::string::npos) << "the first GEMM's site attributes: matmul, erf gelu, bias";
    expect_matches_reference(m, {rnd({1, 20, 96}, 34)}, "matmul + bias + erf gelu + matmul + bias");
  }
  {  // the GEMM's value is also a result: the GELU is computed apart, inside the same kernel
    ir::Expr x = ir::var("x", ir::tensor_type({7, 40}, DType::f32));
    ir::Expr h = ir::call(OpCode::Dense, {x, ir::constant(rnd({33, 40}, 35)), ir::constant(rnd({33}, 36))});
    ir::Module m = module_of({x}, ir::tuple({gelu_erf_chain(h), h}));
    expect_matches_reference(m, {rnd({7, 40}, 37)}, "dense + erf gelu, the dense also a result");
  }
}

TEST(LibxsmmHook, DeclinesWhatItCannotRunWithAReason) {
  // A matmul whose left operand is broadcast over the batch stays native.
  ir::Expr a = ir::var("a", ir::tensor_type({40, 65}, DType::f32));
  ir::Expr b = ir::var("b", ir::tensor_type({3, 65, 17}, DType::f32));
  ir::Module m = module_of({a, b}, ir::call(OpCode::MatMul, {a, b}));
  api::Compilation c = compile_with_libxsmm(m);
  EXPECT_EQ(hooked_kernels(c), 0);
  expect_matches_reference(m, {rnd({40, 65}, 16), rnd({3, 65, 17}, 17)}, "broadcast matmul (native)", 0);
  std::string reasons;
  for (const partition::NodeDecision& d : c.partition.report.decisions)
    for (const auto& [backend, why] : d.rejections) reasons += backend + ": " + why + "\n";
  EXPECT_NE(reasons.find("libxsmm"), std::string::npos) << reasons;
}

// A hook that fails on a region leaves it to the reference kernels, with the hook's reason in the
// fallbacks; the model still computes the reference's values.
TEST(LibxsmmHook, AHookThatThrowsLeavesTheRegionToTheReferenceKernels) {
  ir::Expr x = ir::var("x", ir::tensor_type({5, 12}, DType::f32));
  ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Dense, {x, ir::constant(rnd({9, 12}, 41)), ir::constant(rnd({9}, 42))})});
  ir::Module m = module_of({x}, y);
  partition::PartitionOptions po = api::partition_options({"libxsmm"}, {});
  partition::PartitionResult pr = partition::partition_module(m, po);
  native::CompileOptions o;
  o.lowering_hooks["libxsmm"] = [](const ir::FunctionNode&, const std::string&, const target::Target&) -> tir::PrimFunc {
    throw Error("libxsmm: this hook fails on purpose");
  };
  native::Compiled nc = native::compile_native(pr.module, o);
  std::string fallbacks;
  for (const auto& [k, why] : nc.fallbacks) fallbacks += k + ": " + why + "\n";
  EXPECT_NE(fallbacks.find("this hook fails on purpose"), std::string::npos) << fallbacks;
  std::vector<Tensor> in{rnd({5, 12}, 43)};
  Tensor want = reference::run_module(m, in).value()[0];
  Tensor got = nc.executable->run(in, 2, nullptr)[0];
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-4 + 1e-4 * std::abs(want.data<float>()[i])) << i;
}

TEST(LibxsmmHook, IrAfterTheHook) {
  // The graph the partitioner leaves, the region as the kernel the hook receives (weights lifted
  // to parameters, LoweredBy), and the loop IR the hook makes of it.
  ir::Expr x = ir::var("x", ir::tensor_type({4, 8}, DType::f32));
  ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Dense, {x, ir::constant(rnd({6, 8}, 18)), ir::constant(rnd({6}, 19))})});
  partition::PartitionOptions po = api::partition_options({"libxsmm"}, {});
  partition::PartitionResult pr = partition::partition_module(module_of({x}, y), po);
  ir::Module hooked = native::take_hooked_regions(native::fuse_for_native(pr.module), runtime::lowering_hooks(po.backends));
  ir::PrintOptions no_weights;
  no_weights.constant_data = false;
  const std::string graph = ir::print_module(hooked, no_weights);
  EXPECT_EQ(graph.substr(0, graph.find("constants {")), R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(4, 6), float32] {
  %0 = fn (%libxsmm_0_i0: Tensor[(4, 8), float32], %w0: Tensor[(6, 8), float32], %w1: Tensor[(6,), float32]) -> Tensor[(4, 6), float32] attrs {Compiler="libxsmm", LoweredBy="libxsmm", Primitive="1"} {
    %1 = fn (%p0: Tensor[(4, 8), float32], %p1: Tensor[(6, 8), float32], %p2: Tensor[(6,), float32]) -> Tensor[(4, 6), float32] attrs {Composite="libxsmm.gemm_act"} {
      %2 = nn.dense(%p0, %p1, %p2);
      nn.relu(%2)
    };
    %1(%libxsmm_0_i0, %w0, %w1)
  };
  %0(%x, @c0, @c1)
}
)");
  auto* call = hooked.main().body->as<ir::CallNode>();
  ASSERT_TRUE(call && call->callee->as<ir::FunctionNode>());
  const backends::LoweringHook* hook = po.backends[0]->lowering_hook();
  ASSERT_NE(hook, nullptr);
  tir::PrimFunc f = hook->lower(*call->callee->as<ir::FunctionNode>(), "k0_libxsmm", target::host());
  EXPECT_EQ(tir::print_func(f), R"(func k0_libxsmm(p0: float32[4, 8], p1: float32[6, 8], p2: float32[6], gemm0: float32[4, 6]) {
  call stateful sy_libxsmm_gemm(p0, p1, p2, gemm0, 0, 1, 1)
}
)");
}

TEST(LibxsmmHook, ArtifactLoadsWithoutTheBackend) {
  ir::Expr x = ir::var("x", ir::tensor_type({37, 300}, DType::f32));
  ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Dense, {x, ir::constant(rnd({70, 300}, 20)), ir::constant(rnd({70}, 21))})});
  ir::Module m = module_of({x}, y);
  api::Compilation c = compile_with_libxsmm(m);
  const std::string path = ::testing::TempDir() + "/libxsmm_hook.sya";
  runtime::save_artifact(c.model, path);
  runtime::CompiledModel back = runtime::load_artifact(path, {});  // no backend at all
  std::vector<Tensor> in{rnd({37, 300}, 22)};
  std::vector<Tensor> want = c.model.run(in, 2), got = back.run(in, 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(0, std::memcmp(got[0].raw(), want[0].raw(), static_cast<size_t>(want[0].nbytes())));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sy
