// The native execution plan: kernel dedup, reshape views, and static memory planning.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/parser.h"
#include "native/compile.h"
#include "native/plan.h"
#include "passes/fold_constants.h"
#include "passes/fuse_ops.h"
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
