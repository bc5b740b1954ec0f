// The llvm codegen hook: kernels built through LLVM (target -codegen=llvm) give the reference
// executor's values on every path of the vector lowering (contiguous, masked and gathered reads,
// guards on and off the vector variable, reductions with and without a tail), report faults as
// the C path does, and the IR after the hook is what the hook promises (golden text).
#include <gtest/gtest.h>

#include <tuple>

#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/reference/executor.h"
#include "codegen/c/hooks.h"
#include "codegens/llvm/ir_emitter.h"
#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/random_tensor.h"
#include "target/host.h"
#include "target/target.h"

namespace sy {
namespace {

using ops::OpCode;

Tensor rnd(Shape s, uint64_t seed) { return random_tensor(s, DType::f32, seed); }

void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-4) {
  ASSERT_EQ(got.numel(), want.numel());
  ASSERT_EQ(got.dtype(), want.dtype());
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
    const double g = got.dtype() == DType::f32 ? got.data<float>()[i] : static_cast<double>(got.data<int64_t>()[i]);
    const double w = want.dtype() == DType::f32 ? want.data<float>()[i] : static_cast<double>(want.data<int64_t>()[i]);
    if (!(std::abs(g - w) <= tol + tol * std::abs(w))) {
      ++bad;
      ADD_FAILURE() << "element " << i << ": llvm " << g << ", reference " << w;
    }
  }
}

const char* kTargets[] = {"cpu -codegen=llvm", "cpu -isa=avx2 -codegen=llvm"};

// Compiles m for each target this machine runs, checks the outputs against the reference at 1
// and 2 threads; returns the host target's generated IR.
std::string check_model(const ir::Module& m, const std::vector<Tensor>& in) {
  std::vector<Tensor> want = reference::run_module(m, in).value();
  std::string ir;
  for (const char* t : kTargets) {
    native::CompileOptions o;
    o.target = target::parse(t);
    if (!o.target->missing_on(target::host()).empty()) continue;
    native::Compiled nc = native::compile_native(m, o);
    EXPECT_EQ(nc.generated_c.find("#include"), std::string::npos) << "not LLVM IR";
    for (int threads : {1, 2}) {
      std::vector<Tensor> got = nc.executable->run(in, threads, nullptr);
      for (size_t k = 0; k < want.size(); ++k) expect_close(got[k], want[k]);
    }
    if (ir.empty()) ir = nc.generated_c;
  }
  return ir;
}

ir::Module one_op(OpCode op, std::vector<ir::Expr> params, std::vector<ir::Expr> args) {
  ir::Module m;
  m.functions["main"] = ir::function(std::move(params), ir::call(op, std::move(args)));
  return m;
}
template <typename A>
ir::Module one_op(OpCode op, std::vector<ir::Expr> params, std::vector<ir::Expr> args, const A& a) {
  ir::Module m;
  m.functions["main"] = ir::function(std::move(params), ir::call(op, std::move(args), a));
  return m;
}

TEST(LlvmCodegen, IsRegisteredAndNamedInTargets) {
  EXPECT_NE(codegen::find_codegen_hook("llvm"), nullptr);
  EXPECT_EQ(target::parse("cpu -codegen=llvm").codegen, "llvm");
  EXPECT_NE(target::parse("cpu -codegen=llvm").str().find("-codegen=llvm"), std::string::npos);
  EXPECT_NE(target::parse("cpu -codegen=llvm").key(), target::parse("cpu").key());  // records keep apart
  EXPECT_EQ(target::parse(target::parse("cpu -isa=avx2 -codegen=llvm").str()), target::parse("cpu -isa=avx2 -codegen=llvm"));
  try {
    native::CompileOptions o;
    o.target = target::parse("cpu -codegen=nosuch");
    ir::Expr x = ir::var("x", ir::tensor_type({4}, DType::f32));
    native::compile_native(one_op(OpCode::Relu, {x}, {x}), o);
    FAIL() << "an unknown code generator was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target codegen 'nosuch' is not built in (built in: c, llvm"), std::string::npos)
        << e.what();
  }
}

// Register tiles of FMAs (contiguous weights, broadcast inputs), a pad read under a guard that
// does not depend on the vector variable and one that does (masked loads), tails in the tile
// write-out. With one channel tile (128 -> 32 channels on 28x28) the conv runs in passes, each
// group of rows padding its own rows; the first and last groups are peeled-off pieces of the
// parallel loop, which the threads share with the rest.
TEST(LlvmCodegen, ConvBlocksMatchTheReference) {
  for (const auto& [hw, C, O] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{14, 32, 64}, {7, 32, 64}, {28, 128, 32}}) {
    ops::Conv2dAttrs a;
    a.strides = {1, 1};
    a.padding = {1, 1, 1, 1};
    a.dilation = {1, 1};
    ir::Expr x = ir::var("x", ir::tensor_type({1, C, hw, hw}, DType::f32));
    ir::Expr y = ir::call(OpCode::Conv2d, {x, ir::constant(rnd({O, C, 3, 3}, 1)), ir::constant(rnd({O}, 2))}, a);
    ir::Module m;
    m.functions["main"] = ir::function({x}, ir::call(OpCode::Relu, {y}));
    const std::string ir = check_model(m, {rnd({1, C, hw, hw}, 3)});
    EXPECT_NE(ir.find("@GOMP_parallel"), std::string::npos);
    // Vectors of the host's width (the kernels run here).
    EXPECT_NE(ir.find("<" + std::to_string(target::host().vector_lanes()) + " x float>"), std::string::npos);
  }
}

// A concat's loop per input: pieces of one parallel loop, one team.
TEST(LlvmCodegen, ConcatIsOneTeam) {
  std::vector<ir::Expr> xs;
  std::vector<Tensor> in;
  for (int i = 0; i < 5; ++i) {
    std::string name = "x";
    name += std::to_string(i);
    xs.push_back(ir::var(name, ir::tensor_type({1, 32 + i, 28, 27}, DType::f32)));
    in.push_back(rnd({1, 32 + i, 28, 27}, 10 + static_cast<uint64_t>(i)));
  }
  ops::AxisAttrs axis;
  axis.axis = 1;
  const std::string ir = check_model(one_op(OpCode::Concat, xs, xs, axis), in);
  size_t teams = 0;
  for (size_t at = ir.find("call void @GOMP_parallel"); at != std::string::npos; at = ir.find("call void @GOMP_parallel", at + 1)) ++teams;
  EXPECT_EQ(teams, 1u) << ir;
}

// Reductions over 770 (whole vectors and a tail), with the libmvec call of erf.
TEST(LlvmCodegen, ReductionsAndVectorMathMatchTheReference) {
  ir::Expr x = ir::var("x", ir::tensor_type({3, 770}, DType::f32));
  ops::ReduceAttrs r;
  r.axes = {1};
  for (OpCode op : {OpCode::ReduceSum, OpCode::ReduceMax, OpCode::ReduceMean})
    check_model(one_op(op, {x}, {ir::call(OpCode::Erf, {x})}, r), {rnd({3, 770}, 21)});
  const std::string ir = check_model(one_op(OpCode::Erf, {x}, {x}), {rnd({3, 770}, 22)});
  const bool avx512 = target::host().isa() == target::IsaLevel::Avx512;
  EXPECT_NE(ir.find(avx512 ? "@_ZGVeN16v_erff" : "@_ZGVdN8v_erff"), std::string::npos);
}

// Gathers (an index read from data) and the fault of an index out of range, as the C path's.
TEST(LlvmCodegen, GatherAndItsFault) {
  ir::Expr x = ir::var("x", ir::tensor_type({6, 9}, DType::f32));
  ir::Expr idx = ir::var("i", ir::tensor_type({4}, DType::i64));
  ops::AxisAttrs a;
  a.axis = 0;
  ir::Module m = one_op(OpCode::Gather, {x, idx}, {x, idx}, a);
  Tensor good(DType::i64, {4});
  for (int64_t k = 0; k < 4; ++k) good.data<int64_t>()[k] = (k * 5) % 6 - (k == 3 ? 6 : 0);  // one negative index
  check_model(m, {rnd({6, 9}, 31), good});
  Tensor bad = good;
  bad.data<int64_t>()[2] = 17;
  native::CompileOptions o;
  o.target = target::parse("cpu -codegen=llvm");
  native::Compiled nc = native::compile_native(m, o);
  try {
    nc.executable->run({rnd({6, 9}, 31), bad}, 1, nullptr);
    FAIL() << "an index out of range was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

TEST(LlvmCodegen, IntegerDivisionByZeroIsAFault) {
  ir::Expr a = ir::var("a", ir::tensor_type({5}, DType::i32)), b = ir::var("b", ir::tensor_type({5}, DType::i32));
  native::CompileOptions o;
  o.target = target::parse("cpu -codegen=llvm");
  native::Compiled nc = native::compile_native(one_op(OpCode::Div, {a, b}, {a, b}), o);
  Tensor x(DType::i32, {5}), y(DType::i32, {5});
  for (int k = 0; k < 5; ++k) {
    x.data<int32_t>()[k] = 7 - 3 * k;
    y.data<int32_t>()[k] = k == 3 ? 0 : 2;
  }
  try {
    nc.executable->run({x, y}, 1, nullptr);
    FAIL() << "a division by zero was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("integer division or modulo by zero"), std::string::npos) << e.what();
  }
  y.data<int32_t>()[3] = -4;
  Tensor got = nc.executable->run({x, y}, 1, nullptr)[0];
  const int32_t want[] = {3, 2, 0, 0, -2};  // ONNX Div on integers truncates
  for (int k = 0; k < 5; ++k) EXPECT_EQ(got.data<int32_t>()[k], want[k]) << k;
}

// The IR after the hook for a small kernel: B[i, j] = A[i, j] * 2 in a parallel loop over rows
// and a vector loop over 16 columns.
TEST(LlvmCodegen, GoldenIrOfAParallelVectorKernel) {
  using namespace tir;
  Buffer a = buffer("A", DType::f32, {4, 16}), b = buffer("B", DType::f32, {4, 16});
  Expr i = var("i"), j = var("j");
  PrimFunc f;
  f.name = "scale";
  f.params = {a, b};
  f.body = for_loop(i, int_imm(0), int_imm(4), ForKind::Parallel,
                    for_loop(j, int_imm(0), int_imm(16), ForKind::Vectorized,
                             store(b, {i, j}, load(a, {i, j}) * float_imm(2.0))));
  llvm::LLVMContext ctx;
  codegen::llvmgen::EmitOptions eo;
  std::unique_ptr<llvm::Module> mod = codegen::llvmgen::emit_module(ctx, {f}, eo);
  std::string text;
  llvm::raw_string_ostream os(text);
  mod->getFunction("scale_body_par1_body")->print(os);
  EXPECT_EQ(os.str(), R"(; Function Attrs: nounwind
define internal void @scale_body_par1_body(float* noalias %0, float* noalias %1, i32* %2, i8** %3) #0 {
entry:
  br label %start

start:                                            ; preds = %entry
  %4 = call i32 @omp_get_thread_num()
  %5 = sext i32 %4 to i64
  %6 = call i32 @omp_get_num_threads()
  %7 = sext i32 %6 to i64
  %8 = sdiv i64 4, %7
  %9 = srem i64 4, %7
  %10 = icmp slt i64 %5, %9
  %11 = mul i64 %5, %8
  %12 = select i1 %10, i64 %5, i64 %9
  %13 = add i64 %11, %12
  %14 = zext i1 %10 to i64
  %15 = add i64 %8, %14
  %16 = add i64 0, %13
  %17 = add i64 %16, %15
  br label %i.head

i.head:                                           ; preds = %i.body, %start
  %i = phi i64 [ %16, %start ], [ %27, %i.body ]
  %18 = icmp slt i64 %i, %17
  br i1 %18, label %i.body, label %i.exit

i.body:                                           ; preds = %i.head
  %19 = mul i64 %i, 16
  %20 = getelementptr inbounds float, float* %0, i64 %19
  %21 = bitcast float* %20 to <16 x float>*
  %22 = load <16 x float>, <16 x float>* %21, align 4
  %23 = fmul contract <16 x float> %22, <float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00>
  %24 = mul i64 %i, 16
  %25 = getelementptr inbounds float, float* %1, i64 %24
  %26 = bitcast float* %25 to <16 x float>*
  store <16 x float> %23, <16 x float>* %26, align 4
  %27 = add nuw nsw i64 %i, 1
  br label %i.head

i.exit:                                           ; preds = %i.head
  ret void
}
)");
}

}  // namespace
}  // namespace sy
