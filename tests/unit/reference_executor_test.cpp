// Reference executor: input checks, graph evaluation, function calls, tuples and errors as Status.
#include "backends/reference/executor.h"
#include "ops/op.h"
#include "reference_test_util.h"

using namespace sy;
using namespace sy::reftest;
using ops::OpCode;

namespace {

ir::Type f32_type(Shape s) { return ir::tensor_type(std::move(s), DType::f32); }

ir::Module module_of(ir::Expr main) {
  ir::Module m;
  m.functions["main"] = std::move(main);
  return m;
}

}  // namespace

TEST(ReferenceExecutor, EvaluatesAGraphWithSharedNodes) {
  ir::Expr x = ir::var("x", f32_type({3}));
  ir::Expr y = ir::var("y", f32_type({3}));
  ir::Expr s = ir::call(OpCode::Add, {x, y});
  // s is used three times; it must stay alive until its last user has run.
  ir::Expr t = ir::call(OpCode::Mul, {s, s});
  ir::Expr body = ir::call(OpCode::Sub, {t, ir::call(OpCode::Relu, {s})});
  ir::Module m = module_of(ir::function({x, y}, body));
  auto r = reference::run_module(m, {f32({3}, {1, 2, -3}), f32({3}, {1, 1, 1})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  expect_near((*r)[0], {2, 6, 4});  // s = [2, 3, -2]: s*s - relu(s)
}

TEST(ReferenceExecutor, ChecksInputs) {
  ir::Expr x = ir::var("x", f32_type({1, 3, 224, 224}));
  ir::Module m = module_of(ir::function({x}, ir::call(OpCode::Relu, {x})));
  auto r = reference::run_module(m, {Tensor(DType::f32, {1, 3, 32, 32})});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(),
            "input 'x': expected Tensor[(1, 3, 224, 224), float32], got Tensor[(1, 3, 32, 32), float32]");
  r = reference::run_module(m, {Tensor(DType::i64, {1, 3, 224, 224})});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(),
            "input 'x': expected Tensor[(1, 3, 224, 224), float32], got Tensor[(1, 3, 224, 224), int64]");
  r = reference::run_module(m, {});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "@main expects 1 input, got 0");
  r = reference::run_module(m, {Tensor()});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "input 'x': tensor has no data");
  r = reference::run_module(ir::Module{}, {});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "module has no @main function");
}

TEST(ReferenceExecutor, CallsGlobalAndInlineFunctions) {
  ir::Module m;
  ir::Expr a = ir::var("a", f32_type({2}));
  m.functions["square"] = ir::function({a}, ir::call(OpCode::Mul, {a, a}));
  ir::Expr b = ir::var("b", f32_type({2}));
  ir::Expr neg = ir::function({b}, ir::call(OpCode::Neg, {b}), {{"Primitive", "1"}});
  ir::Expr x = ir::var("x", f32_type({2}));
  ir::Expr body = ir::call(OpCode::Add, {ir::call_function(m.global("square"), {x}), ir::call_function(neg, {x})});
  m.functions["main"] = ir::function({x}, body);
  auto r = reference::run_module(m, {f32({2}, {3, -2})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  expect_near((*r)[0], {6, 6});  // x*x - x
}

TEST(ReferenceExecutor, TuplesAreProjectedAndFlattened) {
  ir::Expr x = ir::var("x", f32_type({4}));
  ops::SplitAttrs sp;
  sp.sizes = {1, 3};
  ir::Expr parts = ir::call(OpCode::Split, {x}, sp);
  ir::Expr second = ir::tuple_get_item(parts, 1);
  ir::Expr c = ir::constant(f32({3}, {10, 20, 30}));
  ir::Expr body = ir::tuple({ir::tuple_get_item(parts, 0), ir::tuple({ir::call(OpCode::Add, {second, c}), x})});
  ir::Module m = module_of(ir::function({x}, body));
  auto r = reference::run_module(m, {f32({4}, {1, 2, 3, 4})}, {.threads = 1, .external = nullptr});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  expect_near((*r)[0], {1});
  expect_near((*r)[1], {12, 23, 34});
  expect_near((*r)[2], {1, 2, 3, 4});
}

TEST(ReferenceExecutor, KernelErrorsBecomeStatus) {
  ir::Expr x = ir::var("x", f32_type({3}));
  ir::Expr idx = ir::constant(i64({1}, {5}));
  ir::Module m = module_of(ir::function({x}, ir::call(OpCode::Gather, {x, idx}, ops::AxisAttrs{})));
  auto r = reference::run_module(m, {f32({3}, {1, 2, 3})});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "take: index 5 is out of range for an axis of size 3");
}

TEST(ReferenceExecutor, LongChainRuns) {
  // Deep graphs must not recurse; each intermediate is freed after its single use.
  ir::Expr x = ir::var("x", f32_type({1000}));
  ir::Expr e = x;
  ir::Expr one = ir::constant(Tensor::scalar<float>(1));
  for (int i = 0; i < 5000; ++i) e = ir::call(OpCode::Add, {e, one});
  ir::Module m = module_of(ir::function({x}, e));
  auto r = reference::run_module(m, {Tensor(DType::f32, {1000})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ((*r)[0].data<float>()[999], 5000.0f);
}
