// One compiled model run from several threads at once gives the outputs of sequential runs
// (each run takes its own activation arena; kernel faults are per call).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api/inputs.h"
#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "strategy/externs.h"
#include "strategy/strategy.h"
#include "support/error.h"
#include "support/random_tensor.h"
#include "zoo/zoo.h"

namespace sy {
namespace {

TEST(NativeConcurrency, FourThreadsGiveTheSequentialOutputs) {
  // MobileNetV2 at 64x64: convs, depthwise convs, adds and a dense; ~6 MB of planned activations.
  zoo::ZooOptions zo;
  zo.input_shapes["input"] = {1, 3, 64, 64};
  native::Compiled c = native::compile_native(zoo::build("mobilenet_v2", zo));
  const native::Executable& exe = *c.executable;
  constexpr int kThreads = 4, kRunsEach = 6;
  // Different inputs per thread, so that a shared arena would mix answers.
  std::vector<Tensor> inputs, want;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(sy::random_tensor({1, 3, 64, 64}, DType::f32, 100 + static_cast<uint64_t>(t)));
    want.push_back(exe.run({inputs.back()}, 1, nullptr).at(0));
  }
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRunsEach; ++r)
          if (!exe.run({inputs[static_cast<size_t>(t)]}, 1, nullptr).at(0).bitwise_equal(want[static_cast<size_t>(t)]))
            ++mismatches;
      } catch (const Error&) {
        ++errors;
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0) << "of " << kThreads * kRunsEach << " concurrent runs";
}

TEST(NativeConcurrency, AFaultInOneRunDoesNotLeakIntoAnother) {
  // Gather with indices from the data: one thread's out-of-range index is its own error only.
  constexpr int64_t kN = 1 << 16;  // long enough a kernel for the runs to overlap
  ir::Expr x = ir::var("x", ir::tensor_type({8}, DType::f32));
  ir::Expr i = ir::var("i", ir::tensor_type({kN}, DType::i64));
  ir::Module m;
  ops::AxisAttrs a;
  a.axis = 0;
  m.functions["main"] = ir::function({x, i}, ir::call(ops::OpCode::Gather, {x, i}, a));
  native::Compiled c = native::compile_native(m);
  Tensor xs = sy::random_tensor({8}, DType::f32, 1);
  Tensor good(DType::i64, {kN}), bad(DType::i64, {kN});
  for (int64_t k = 0; k < kN; ++k) good.data<int64_t>()[k] = bad.data<int64_t>()[k] = k % 8;
  bad.data<int64_t>()[kN / 2] = 50;
  std::atomic<int> good_failed{0}, bad_passed{0};
  std::thread tb([&] {
    for (int r = 0; r < 200; ++r) try {
        c.executable->run({xs, bad}, 1, nullptr);
        ++bad_passed;
      } catch (const Error&) {
      }
  });
  std::thread tg([&] {
    for (int r = 0; r < 200; ++r) try {
        c.executable->run({xs, good}, 1, nullptr);
      } catch (const Error&) {
        ++good_failed;
      }
  });
  tb.join();
  tg.join();
  EXPECT_EQ(bad_passed.load(), 0);
  EXPECT_EQ(good_failed.load(), 0);
}

}  // namespace
}  // namespace sy

namespace sy {
namespace {

// Every conv, dense and matmul on an extern implementation of this build (by kernel, in turn
// among those that apply), run from several threads at once: a state is shared by concurrent
// runs, so it must keep nothing of one run that another may see.
TEST(NativeConcurrency, ExternStatesAreSharedSafely) {
  std::vector<std::pair<std::string, zoo::ZooOptions>> models(2);
  models[0].first = "mobilenet_v2";
  models[0].second.input_shapes["input"] = {1, 3, 64, 64};
  models[1].first = "bert_encoder";
  int forced = 0;
  for (auto& [name, zo] : models) {
    ir::Module m = zoo::build(name, zo);
    native::CompileOptions o;
    o.chooser = [&forced](const ir::FunctionNode&, const ir::CallNode& anchor,
                          const target::Target& t) -> std::optional<strategy::Choice> {
      std::vector<std::string> ext;
      for (const auto& e : strategy::applicable(anchor, t).entries)
        if (!e.impl->library.empty()) ext.push_back(e.impl->name);
      if (ext.empty()) return std::nullopt;
      return strategy::Choice{ext[static_cast<size_t>(forced++) % ext.size()], "", "forced by the test", true, {}, {}, ""};
    };
    native::Compiled c = native::compile_native(m, o);
    const native::Executable& exe = *c.executable;
    const std::vector<ir::Expr>& params = m.main().params;
    constexpr int kThreads = 3, kRunsEach = 4;
    std::vector<std::vector<Tensor>> inputs;
    std::vector<Tensor> want;
    for (int t = 0; t < kThreads; ++t) {
      std::vector<Tensor> in;
      for (const ir::Expr& p : params) {
        const ir::TypeNode& ty = ir::as_tensor(p->type);
        in.push_back(sy::random_tensor(ty.shape, ty.dtype, 200 + static_cast<uint64_t>(t)));
      }
      inputs.push_back(in);
      want.push_back(exe.run(in, 1, nullptr).at(0));
    }
    std::atomic<int> mismatches{0}, errors{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        try {
          for (int r = 0; r < kRunsEach; ++r)
            if (!exe.run(inputs[static_cast<size_t>(t)], 1, nullptr).at(0).bitwise_equal(want[static_cast<size_t>(t)]))
              ++mismatches;
        } catch (const Error&) {
          ++errors;
        }
      });
    for (auto& th : pool) th.join();
    EXPECT_EQ(errors.load(), 0) << name;
    EXPECT_EQ(mismatches.load(), 0) << name << ": of " << kThreads * kRunsEach << " concurrent runs";
  }
  if (strategy::extern_libraries().empty()) GTEST_SKIP() << "this build has no extern implementations";
  EXPECT_GT(forced, 0);
}

}  // namespace
}  // namespace sy
