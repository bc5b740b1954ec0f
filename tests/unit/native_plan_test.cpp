// The native execution plan: kernel dedup, reshape views, static memory planning, and
// concatenations planned in place.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/parser.h"
#include "native/compile.h"
#include "backends/reference/executor.h"
#include "native/plan.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "passes/fold_constants.h"
#include "passes/fuse_ops.h"
#include "topi/topi.h"
#include "zoo/zoo.h"

namespace sy {
namespace {

native::Plan plan_of(const std::string& zoo_name) {
  ir::Module m = zoo::build(zoo_name, {});
  return native::plan_module(passes::fuse_ops(passes::fold_constants(m)));
}

TEST(NativePlan, ResNet50MemoryPlanReusesStorage) {
  native::Plan p = plan_of("resnet50");
  EXPECT_GT(p.intermediate_bytes, 0);
  EXPECT_LE(p.arena_bytes * 10, p.intermediate_bytes * 4)
      << "planned " << p.arena_bytes << " of " << p.intermediate_bytes << " bytes";
  EXPECT_LT(p.kernels.size(), static_cast<size_t>(p.kernel_launches));  // repeated blocks share kernels
}

// The arena is within 10% of its lower bound, the most bytes live at once during one call (an
// online best-fit had fragmented ResNet-50's to 10.4 MB, 1.44x the 7.2 MB its buffers need).
TEST(NativePlan, TheArenaIsCloseToTheLargestLiveSet) {
  for (const char* model : {"resnet50", "mobilenet_v2"}) {
    native::Plan p = plan_of(model);
    auto root = [&](int v) {
      while (p.values[static_cast<size_t>(v)].alias_of >= 0) v = p.values[static_cast<size_t>(v)].alias_of;
      return v;
    };
    std::vector<int> last(p.values.size(), -1), first(p.values.size(), -1);
    for (size_t i = 0; i < p.calls.size(); ++i) {
      for (int v : p.calls[i].inputs) last[static_cast<size_t>(root(v))] = static_cast<int>(i);
      for (int v : p.calls[i].outputs)
        if (first[static_cast<size_t>(v)] < 0) first[static_cast<size_t>(v)] = static_cast<int>(i);
    }
    for (int v : p.outputs) last[static_cast<size_t>(root(v))] = static_cast<int>(p.calls.size());
    int64_t most = 0;
    for (size_t i = 0; i < p.calls.size(); ++i) {
      int64_t live = 0;
      for (size_t v = 0; v < p.values.size(); ++v)
        if (p.values[v].kind == native::ValueKind::Storage && p.values[v].alias_of < 0 && first[v] >= 0 &&
            first[v] <= static_cast<int>(i) && static_cast<int>(i) <= std::max(first[v], last[v]))
          live += p.values[v].nbytes();
      most = std::max(most, live);
    }
    EXPECT_GE(p.arena_bytes, most) << model;
    EXPECT_LE(p.arena_bytes * 10, most * 11) << model << ": planned " << p.arena_bytes << " for a live set of " << most;
  }
}

TEST(NativePlan, LiveValuesNeverShareBytes) {
  for (const char* model : {"mobilenet_v2", "resnet50"}) {
    native::Plan p = plan_of(model);
    // For every call, its inputs and outputs that live in the arena must not overlap.
    std::vector<int> last(p.values.size(), -1), first(p.values.size(), -1);
    auto root = [&](int v) {
      while (p.values[static_cast<size_t>(v)].alias_of >= 0) v = p.values[static_cast<size_t>(v)].alias_of;
      return v;
    };
    for (size_t i = 0; i < p.calls.size(); ++i) {
      for (int v : p.calls[i].inputs) last[static_cast<size_t>(root(v))] = static_cast<int>(i);
      for (int v : p.calls[i].outputs)
        if (first[static_cast<size_t>(v)] < 0) first[static_cast<size_t>(v)] = static_cast<int>(i);
    }
    for (size_t a = 0; a < p.values.size(); ++a)
      for (size_t b = a + 1; b < p.values.size(); ++b) {
        const auto &va = p.values[a], &vb = p.values[b];
        if (va.kind != native::ValueKind::Storage || vb.kind != native::ValueKind::Storage) continue;
        if (va.alias_of >= 0 || vb.alias_of >= 0 || first[a] < 0 || first[b] < 0) continue;
        int ea = std::max(last[a], first[a]), eb = std::max(last[b], first[b]);
        bool live_together = first[a] <= eb && first[b] <= ea;
        bool overlap = va.offset < vb.offset + vb.nbytes() && vb.offset < va.offset + va.nbytes();
        ASSERT_FALSE(live_together && overlap) << model << ": values " << a << " and " << b << " share bytes while both live";
      }
  }
}

}  // namespace
}  // namespace sy

namespace sy {
namespace {

// A kernel marked InPlace=k gets its result planned in the storage of its input k when nothing
// reads that input after the call; not when something does.
TEST(NativePlan, InPlaceResultsTakeTheirInputsStorage) {
  auto plan = [](const char* last_reader) {
    std::string text = R"(
def @main(%x: Tensor[(4, 64), float32]) -> Tensor[(4, 64), float32] {
  %0 = fn (%p0: Tensor[(4, 64), float32]) -> Tensor[(4, 64), float32] attrs {Primitive="1"} {
    exp(%p0)
  };
  %1 = %0(%x);
  %2 = fn (%p0: Tensor[(4, 64), float32], %p1: Tensor[(4, 64), float32]) -> Tensor[(4, 64), float32] attrs {InPlace="1", Primitive="1"} {
    add(%p0, %p1)
  };
  %3 = %2(%x, %1);
  %4 = fn (%p0: Tensor[(4, 64), float32], %p1: Tensor[(4, 64), float32]) -> Tensor[(4, 64), float32] attrs {Primitive="1"} {
    multiply(%p0, %p1)
  };
  %4(%3, LAST)
}
)";
    text.replace(text.find("LAST"), 4, last_reader);
    Result<ir::Module> m = ir::parse_module(text);
    EXPECT_TRUE(m.is_ok()) << m.status().message();
    return native::plan_module(m.value());
  };
  native::Plan dead = plan("%x");  // %1 not read after the add: the add's result takes its storage
  EXPECT_EQ(dead.values[static_cast<size_t>(dead.calls[1].outputs[0])].offset,
            dead.values[static_cast<size_t>(dead.calls[1].inputs[1])].offset);
  EXPECT_EQ(dead.arena_bytes, 4 * 64 * 4);
  native::Plan live = plan("%1");  // %1 read by the multiply too: the add's result has its own
  EXPECT_NE(live.values[static_cast<size_t>(live.calls[1].outputs[0])].offset,
            live.values[static_cast<size_t>(live.calls[1].inputs[1])].offset);
}

// A fused group marked Fallback runs on the reference kernels; the rest is generated code.
TEST(NativePlan, FallbackGroupsRunOnTheReferenceKernels) {
  Result<ir::Module> m = ir::parse_module(R"(
def @main(%x: Tensor[(2, 8), float32]) -> Tensor[(2, 8), float32] {
  %0 = fn (%p0: Tensor[(2, 8), float32]) -> Tensor[(2, 8), float32] attrs {Fallback="test: forced", Primitive="1"} {
    exp(%p0)
  };
  %1 = %0(%x);
  %2 = fn (%p0: Tensor[(2, 8), float32]) -> Tensor[(2, 8), float32] attrs {Primitive="1"} {
    nn.relu(%p0)
  };
  %2(%1)
}
)");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  native::Compiled c = native::compile_native(m.value());
  const native::Plan& p = c.executable->plan();
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_TRUE(p.calls[0].fallback);
  EXPECT_FALSE(p.calls[1].fallback);
  Tensor x(DType::f32, {2, 8});
  for (int i = 0; i < 16; ++i) x.data<float>()[i] = static_cast<float>(i - 8) / 4.0f;
  std::vector<Tensor> out = c.executable->run({x}, 1, nullptr);
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(out[0].data<float>()[i], std::exp(static_cast<float>(i - 8) / 4.0f));
  // Loading from the library bytes keeps the split.
  auto loaded = native::load_native(c.fused, c.executable->library_bytes(), c.executable->target());
  EXPECT_TRUE(loaded->plan().calls[0].fallback);
}

}  // namespace
}  // namespace sy

namespace sy {
namespace {

using ops::OpCode;

// A fused primitive function of one op over fresh parameters of the given types.
ir::Expr primitive(OpCode op, const std::vector<ir::Type>& types, ir::AttrsPtr attrs = nullptr) {
  std::vector<ir::Expr> ps;
  for (size_t i = 0; i < types.size(); ++i) ps.push_back(ir::var("p" + std::to_string(i), types[i]));
  return ir::function(ps, ir::call(op, ps, std::move(attrs)), {{"Primitive", "1"}});
}

ir::AttrsPtr axis(int64_t a) {
  auto x = std::make_shared<ops::AxisAttrs>();
  x->axis = a;
  return x;
}

ir::Expr concat_of(const std::vector<ir::Expr>& parts, int64_t ax = 1) {
  std::vector<ir::Type> ts;
  for (const ir::Expr& p : parts) ts.push_back(p->type);
  return ir::call_function(primitive(OpCode::Concat, ts, axis(ax)), parts);
}

ir::Expr unary(OpCode op, const ir::Expr& x) { return ir::call_function(primitive(op, {x->type}), {x}); }

int64_t offset_of(const native::Plan& p, int v) {
  while (p.values[static_cast<size_t>(v)].alias_of >= 0) v = p.values[static_cast<size_t>(v)].alias_of;
  return p.values[static_cast<size_t>(v)].offset;
}

// A concatenation of kernel results along an axis with only 1s before it does not run: each
// producer writes its part of the result in place, also when a part is itself a concatenation
// (Inception's blocks feed one concatenation from four branches) and when a part is read after
// the concatenation's last reader. The values are the reference's.
TEST(NativePlan, ConcatenatedPartsAreWrittenInPlace) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 4, 16}, DType::f32));
  ir::Expr a = unary(OpCode::Exp, x), b = unary(OpCode::Tanh, x);
  ir::Expr c = concat_of({a, b});                                  // (1, 8, 16): a, b
  ir::Expr d = unary(OpCode::Sigmoid, c);
  ir::Expr e = concat_of({d, c});                                  // (1, 16, 16): d, a, b
  ir::Expr out = unary(OpCode::Relu, e);
  ir::Expr late = ir::call_function(primitive(OpCode::Mul, {a->type, a->type}), {a, a});  // a read last
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::tuple({out, late}));
  const native::Plan p = native::plan_module(m);
  ASSERT_EQ(p.calls.size(), 7u);
  EXPECT_TRUE(p.calls[2].elided);
  EXPECT_TRUE(p.calls[4].elided);
  EXPECT_EQ(p.kernel_launches, 5);
  const int64_t whole = offset_of(p, p.calls[4].outputs[0]), row = 16 * 4;
  EXPECT_EQ(offset_of(p, p.calls[3].outputs[0]), whole);              // d
  EXPECT_EQ(offset_of(p, p.calls[2].outputs[0]), whole + 8 * row);    // c
  EXPECT_EQ(offset_of(p, p.calls[0].outputs[0]), whole + 8 * row);    // a
  EXPECT_EQ(offset_of(p, p.calls[1].outputs[0]), whole + 12 * row);   // b
  EXPECT_EQ(p.arena_bytes, 16 * row);  // a, b, c and d need no bytes of their own

  native::Compiled nc = native::compile_native(m);
  Tensor xv(DType::f32, {1, 4, 16});
  for (int i = 0; i < 64; ++i) xv.data<float>()[i] = static_cast<float>(i % 9 - 4) / 3.0f;
  auto want = reference::run_module(m, {xv}, {});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  std::vector<Tensor> got = nc.executable->run({xv}, 2, nullptr);
  ASSERT_EQ(got.size(), 2u);
  for (size_t k = 0; k < 2; ++k)
    for (int64_t i = 0; i < got[k].numel(); ++i)
      EXPECT_NEAR(got[k].data<float>()[i], (*want)[k].data<float>()[i], 1e-6f) << k << " " << i;
}

// Concatenations that must copy: of a graph input, of one value twice, along an axis with a
// batch of 2 before it (the parts interleave), into a graph result (a fresh tensor per run),
// with a part that does not start on a cache line, and of values kept in another layout.
TEST(NativePlan, ConcatenationsThatCannotTakeTheirPartsStillRun) {
  auto plan_of_body = [](const ir::Expr& x, const ir::Expr& body) {
    ir::Module m;
    m.functions["main"] = ir::function({x}, unary(OpCode::Relu, body));
    return native::plan_module(m);
  };
  ir::Expr x = ir::var("x", ir::tensor_type({1, 4, 16}, DType::f32));
  EXPECT_FALSE(plan_of_body(x, concat_of({unary(OpCode::Exp, x), x})).calls[1].elided);
  ir::Expr a = unary(OpCode::Exp, x);
  EXPECT_FALSE(plan_of_body(x, concat_of({a, a})).calls[1].elided);
  ir::Expr x2 = ir::var("x", ir::tensor_type({2, 4, 16}, DType::f32));
  EXPECT_FALSE(plan_of_body(x2, concat_of({unary(OpCode::Exp, x2), unary(OpCode::Tanh, x2)})).calls[2].elided);
  ir::Expr x3 = ir::var("x", ir::tensor_type({1, 3, 5}, DType::f32));  // 60 bytes: the second part at 60
  EXPECT_FALSE(plan_of_body(x3, concat_of({unary(OpCode::Exp, x3), unary(OpCode::Tanh, x3)})).calls[2].elided);
  // The control: the same with parts of whole cache lines is elided.
  EXPECT_TRUE(plan_of_body(x, concat_of({unary(OpCode::Exp, x), unary(OpCode::Tanh, x)})).calls[2].elided);
  ir::Module m;
  m.functions["main"] = ir::function({x}, concat_of({unary(OpCode::Exp, x), unary(OpCode::Tanh, x)}));
  EXPECT_FALSE(native::plan_module(m).calls[2].elided);
  // Parts kept in another layout between kernels (NHWC: a part is a piece of every pixel).
  ir::Expr ea = unary(OpCode::Exp, x), eb = unary(OpCode::Tanh, x);
  const ir::Expr plain_fn = primitive(OpCode::Concat, {ea->type, eb->type}, axis(1));
  const auto* plain = plain_fn->as<ir::FunctionNode>();
  ir::Expr kept = ir::function(plain->params, plain->body, {{"Primitive", "1"}, {topi::kKeptLayoutAttr, "nhwc in=0,1 out"}});
  EXPECT_FALSE(plan_of_body(x, ir::call_function(kept, {ea, eb})).calls[2].elided);
}

}  // namespace
}  // namespace sy
