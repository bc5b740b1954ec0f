// Stateful extern call sites (include/switchyard/extern_abi.h): one state per call of a kernel,
// made once when the executable is made, from the site's shapes and constant contents; run with
// the call's buffers; destroyed with the executable; rebuilt when an artifact's library is loaded.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "backends/reference/executor.h"
#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "strategy/externs.h"
#include "strategy/strategy.h"
#include "target/host.h"
#include "te/tensor.h"
#include "topi_test_data.h"
#include "tune/records.h"
#include "tune/tuner.h"

namespace sy {
namespace {

using ops::OpCode;

std::atomic<int> inits{0}, runs{0}, destroys{0};

// A dense whose weight the state holds unpacked (as a library keeps its own layout).
struct TestDense {
  int64_t M, N, K;
  std::vector<float> w;  // [N, K]
};

void* test_init(const sy_extern_site* s, char* err, size_t n) {
  if (s->num_buffers != 3 || s->num_attrs != 1 || !s->constants[1] || s->ranks[1] != 3) {
    std::snprintf(err, n, "test dense: unexpected site");
    return nullptr;
  }
  auto* d = new TestDense;
  const int64_t B = s->attrs[0];
  d->K = s->shapes[0][1];
  d->M = s->shapes[0][0];
  d->N = s->shapes[2][1];
  EXPECT_EQ(s->shapes[1][2], B);
  const float* p = static_cast<const float*>(s->constants[1]);
  d->w.resize(static_cast<size_t>(d->N * d->K));
  topi::unpack_rows(p, d->N, d->K, B, d->w.data());
  ++inits;
  return d;
}

int32_t test_run(void* state, void* const* b) {
  const TestDense& d = *static_cast<const TestDense*>(state);
  const float* x = static_cast<const float*>(b[0]);
  float* y = static_cast<float*>(b[2]);
  for (int64_t m = 0; m < d.M; ++m)
    for (int64_t i = 0; i < d.N; ++i) {
      float acc = 0;
      for (int64_t k = 0; k < d.K; ++k) acc += x[m * d.K + k] * d.w[static_cast<size_t>(i * d.K + k)];
      y[m * d.N + i] = acc;
    }
  ++runs;
  return 0;
}

void test_destroy(void* state) {
  delete static_cast<TestDense*>(state);
  ++destroys;
}

void register_once() {
  static bool done = [] {
    strategy::register_stateful_extern("sy_test_dense", {test_init, test_run, test_destroy, "test 1.0"});
    topi::OpImpl impl;
    impl.name = "dense.test_state";
    impl.compute = [](const ir::CallNode& c, const std::vector<te::Tensor>& in) {
      const int64_t block = ir::as_tensor(c.args[1]->type).shape[2];
      return std::vector<te::Tensor>{te::stateful_extern_op("dense_test", ir::as_tensor(c.type).shape, DType::f32, in,
                                                            "sy_test_dense", {block})};
    };
    impl.why_not = [](const ir::CallNode& c, const target::Target&) -> std::string {
      return ir::as_tensor(c.args[1]->type).shape.size() == 3 ? "" : "not packed";
    };
    impl.priority = [](const ir::CallNode&, const target::Target&) { return 0; };
    strategy::register_implementation(OpCode::Dense, std::move(impl));
    return true;
  }();
  (void)done;
}

// Two dense layers of one shape (one kernel, two calls, two weights), relu after each.
ir::Module two_layers() {
  ir::Expr x = ir::var("x", ir::tensor_type({3, 20}, DType::f32));
  ir::Expr h = ir::call(OpCode::Relu, {ir::call(OpCode::Dense, {x, ir::constant(topitest::random(DType::f32, {20, 20}, -1, 1, 1))})});
  ir::Expr y = ir::call(OpCode::Relu, {ir::call(OpCode::Dense, {h, ir::constant(topitest::random(DType::f32, {20, 20}, -1, 1, 2))})});
  ir::Module m;
  m.functions["main"] = ir::function({x}, y);
  return m;
}

TEST(ExternState, OneStatePerCallMadeOnceRunEveryTimeDestroyedWithTheExecutable) {
  register_once();
  ir::Module m = two_layers();
  Tensor x = topitest::random(DType::f32, {3, 20}, -1, 1, 3);
  std::vector<Tensor> want = reference::run_module(m, {x}).value();
  native::CompileOptions o;
  o.chooser = [](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
    std::optional<strategy::Choice> c;
    if (anchor.op == OpCode::Dense) c = strategy::Choice{"dense.test_state", "", "forced by the test", true, {}, {}, ""};
    return c;
  };
  const int i0 = inits, r0 = runs, d0 = destroys;
  std::string library, generated;
  ir::Module fused;
  {
    native::Compiled nc = native::compile_native(m, o);
    ASSERT_EQ(nc.executable->plan().kernels.size(), 1u);  // both layers share the kernel
    EXPECT_EQ(inits - i0, 2);                            // a state per call
    EXPECT_NE(nc.generated_c.find("sy_states[0]"), std::string::npos);
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<Tensor> got = nc.executable->run({x}, 0, nullptr);
      for (int64_t i = 0; i < want[0].numel(); ++i)
        ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-4) << "element " << i;
    }
    EXPECT_EQ(runs - r0, 6);
    EXPECT_EQ(inits - i0, 2);  // not remade per run
    library = nc.executable->library_bytes();
    fused = nc.fused;
    EXPECT_EQ(destroys - d0, 0);
  }
  EXPECT_EQ(destroys - d0, 2);
  // An artifact's library: the sites are read back from it and the states made again at load.
  auto ex = native::load_native(fused, library, target::host());
  EXPECT_EQ(inits - i0, 4);
  std::vector<Tensor> got = ex->run({x}, 0, nullptr);
  for (int64_t i = 0; i < want[0].numel(); ++i) ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-4);
  const auto& sites = ex->library()->sites(ex->plan().kernel_names[0]);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].func, "sy_test_dense");
  ASSERT_EQ(sites[0].buffers.size(), 3u);
  EXPECT_EQ(sites[0].buffers[0].param, 0);
  EXPECT_EQ(sites[0].buffers[1].param, 1);
  EXPECT_EQ(sites[0].buffers[2].param, -1);  // the dense result is the kernel's temporary (relu follows)
  EXPECT_EQ(sites[0].buffers[0].shape, (std::vector<int64_t>{3, 20}));
}

TEST(ExternState, AnInitFailureFallsBackToTheDefaultSaysWhyAndFreesTheStatesMade) {
  register_once();
  // One fused dense function called twice: with a packed constant weight (its init succeeds) and
  // with a packed-rank weight that is an input (the test extern's init refuses it).
  const ir::Type xt = ir::tensor_type({3, 20}, DType::f32), wt = ir::tensor_type({2, 20, 16}, DType::f32);
  ir::Expr x = ir::var("x", xt), w = ir::var("w", wt);
  ir::Expr p = ir::var("p0", xt), q = ir::var("p1", wt);
  ir::Expr body = std::make_shared<ir::CallNode>(xt, OpCode::Dense, nullptr, std::vector<ir::Expr>{p, q},
                                                 std::make_shared<const ir::NoAttrs>());
  ir::Expr fn = ir::function({p, q}, body, ir::FuncAttrs{{"Primitive", "1"}});
  Tensor wc = topitest::random(DType::f32, {2, 20, 16}, -1, 1, 4);
  ir::Expr h = ir::call_function(fn, {x, ir::constant(wc)});
  ir::Module m;
  m.functions["main"] = ir::function({x, w}, ir::call_function(fn, {h, w}));
  native::CompileOptions o;
  o.chooser = [](const ir::FunctionNode&, const ir::CallNode&, const target::Target&) {
    return std::optional<strategy::Choice>(strategy::Choice{"dense.test_state", "", "forced by the test", true, {}, {}, ""});
  };
  const int i0 = inits, d0 = destroys;
  native::Compiled nc = native::compile_native(m, o);
  EXPECT_EQ(inits - i0, 1);     // the first call's state was made ...
  EXPECT_EQ(destroys - d0, 1);  // ... and freed with the executable that could not be completed
  ASSERT_EQ(nc.choices.size(), 1u);
  EXPECT_EQ(nc.choices[0].implementation, "nn.dense");
  EXPECT_NE(nc.choices[0].why.find("sy_test_dense: test dense: unexpected site"), std::string::npos) << nc.choices[0].why;
  EXPECT_NE(nc.choices[0].why.find("kernel " + nc.executable->plan().kernel_names[0]), std::string::npos)
      << nc.choices[0].why;
  // The default computes the same dense.
  Tensor xv = topitest::random(DType::f32, {3, 20}, -1, 1, 5), wv = topitest::random(DType::f32, {2, 20, 16}, -1, 1, 6);
  std::vector<Tensor> got = nc.executable->run({xv, wv}, 0, nullptr);
  std::vector<float> wcp(20 * 20), wvp(20 * 20);
  topi::unpack_rows(wc.data<float>(), 20, 20, 16, wcp.data());
  topi::unpack_rows(wv.data<float>(), 20, 20, 16, wvp.data());
  std::vector<float> hv(3 * 20);
  for (int i = 0; i < 3; ++i)
    for (int n = 0; n < 20; ++n) {
      float acc = 0;
      for (int k = 0; k < 20; ++k) acc += xv.data<float>()[i * 20 + k] * wcp[static_cast<size_t>(n * 20 + k)];
      hv[static_cast<size_t>(i * 20 + n)] = acc;
    }
  for (int i = 0; i < 3; ++i)
    for (int n = 0; n < 20; ++n) {
      float acc = 0;
      for (int k = 0; k < 20; ++k) acc += hv[static_cast<size_t>(i * 20 + k)] * wvp[static_cast<size_t>(n * 20 + k)];
      ASSERT_NEAR(got[0].data<float>()[i * 20 + n], acc, 1e-4);
    }
}

TEST(ExternState, TheTunerMeasuresAnExternWithItsStates) {
  // The tuner refuses a process with threads (see tune_test.cpp); ctest runs this test alone.
  if (tune::threads_in_process() > 1) GTEST_SKIP() << "threads already run in this process; ctest runs this test alone";
  register_once();
  ir::Module m = two_layers();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("sy-extern-tune-" + std::to_string(getpid()) + ".jsonl")).string();
  std::filesystem::remove(path);
  tune::TuneOptions o;
  o.trials = 20;
  o.measure.min_runs = 3;
  o.measure.min_seconds = 0.01;
  o.measure.timeout_s = 30;
  o.model_check = false;  // what the records choose is the point here, not the model's end to end
  tune::TuneSummary s = tune::tune(m, target::host(), path, o);
  EXPECT_EQ(s.crashed, 0);
  EXPECT_EQ(s.wrong, 0);
  bool measured = false;
  for (const tune::Record& r : tune::read_records(path))
    if (r.implementation == "dense.test_state") {
      // It ran and was checked (a slow candidate is cut short once checked).
      EXPECT_TRUE(r.outcome == tune::Outcome::Ok || r.outcome == tune::Outcome::Cut) << tune::to_json_line(r);
      EXPECT_LE(r.max_error, 1.0);
      measured = true;
    }
  EXPECT_TRUE(measured);
  std::filesystem::remove(path);
}

TEST(ExternState, UnpackRowsInvertsPackWeight) {
  // dense [N, K] with N not a whole number of blocks (zero padding), conv [O, C, KH, KW].
  for (const Shape& ws : {Shape{37, 5}, Shape{20, 3, 3, 3}}) {
    Tensor w = topitest::random(DType::f32, ws, -1, 1, 7);
    ir::Expr x = ir::var("x", ir::tensor_type(ws.size() == 2 ? Shape{2, 5} : Shape{1, 3, 8, 8}, DType::f32));
    ir::Expr c = ws.size() == 2 ? ir::call(OpCode::Dense, {x, ir::constant(w)}) : ir::call(OpCode::Conv2d, {x, ir::constant(w)}, ops::Conv2dAttrs{});
    for (int64_t block : {8, 16}) {
      Tensor p = topi::pack_weight(*c->as<ir::CallNode>(), w, block);
      std::vector<float> back(static_cast<size_t>(w.numel()));
      topi::unpack_rows(p.data<float>(), ws[0], w.numel() / ws[0], block, back.data());
      for (int64_t i = 0; i < w.numel(); ++i) ASSERT_EQ(back[static_cast<size_t>(i)], w.data<float>()[i]) << i;
    }
  }
}

TEST(ExternState, RegisteredLibrariesAreListedForTheValidators) {
  // The build's extern folders register before main (the generated registration file), in any
  // program linking switchyard_backends.
#ifdef SY_EXPECT_EXTERNS
  EXPECT_NE(strategy::extern_libraries().find("oneDNN"), std::string::npos) << strategy::extern_libraries();
#endif
  register_once();
  EXPECT_NE(strategy::extern_libraries().find("test 1.0"), std::string::npos);
  EXPECT_TRUE(strategy::extern_symbols().count("sy_test_dense"));
  EXPECT_ANY_THROW(strategy::register_stateful_extern("sy_test_dense", {test_init, test_run, test_destroy, ""}));
}

}  // namespace
}  // namespace sy

namespace sy {
namespace {

#ifdef SY_EXPECT_EXTERNS
// conv + bias, + a residual, relu as one oneDNN call whose post-ops are the add and the relu:
// the call writes the kernel's output itself (no temporary, no loop of the kernel's own), and
// the values are the reference executor's. The same group with clip (ReLU6, MobileNetV2's) and
// on the blocked variant (which leaves the add to the kernel: its result has another layout).
TEST(ExternState, OneDnnConvTakesTheEpilogueAsPostOps) {
  for (const char* impl : {"conv2d.onednn", "conv2d.onednn_blocked"})
    // relu(conv + r); clip(r + conv, 0, 6); clip(conv + r, -inf, 6); relu(conv)
    for (int variant : {0, 1, 2, 3}) {
      const bool clip = variant == 1 || variant == 2, residual = variant != 3;
      ir::Expr x = ir::var("x", ir::tensor_type({1, 16, 10, 10}, DType::f32));
      ops::Conv2dAttrs a;
      a.padding = {1, 1, 1, 1};
      ir::Expr y = ir::call(OpCode::Conv2d, {x, ir::constant(topitest::random(DType::f32, {16, 16, 3, 3}, -0.3, 0.3, 8)),
                                             ir::constant(topitest::random(DType::f32, {16}, -1, 1, 9))}, a);
      ir::Expr r = ir::var("r", ir::tensor_type({1, 16, 10, 10}, DType::f32));
      ops::ClipAttrs ca;
      ca.min = variant == 2 ? -INFINITY : 0;
      ca.max = 6;
      ir::Expr s = !residual ? y : variant == 1 ? ir::call(OpCode::Add, {r, y}) : ir::call(OpCode::Add, {y, r});
      y = clip ? ir::call(OpCode::Clip, {s}, ca) : ir::call(OpCode::Relu, {s});
      ir::Module m;
      m.functions["main"] = residual ? ir::function({x, r}, y) : ir::function({x}, y);
      std::vector<Tensor> in = {topitest::random(DType::f32, {1, 16, 10, 10}, -1, 1, 10)};
      if (residual) in.push_back(topitest::random(DType::f32, {1, 16, 10, 10}, -1, 1, 11));
      std::vector<Tensor> want = reference::run_module(m, in).value();
      native::CompileOptions o;
      const std::string name = impl;
      o.chooser = [&](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
        std::optional<strategy::Choice> c;
        if (anchor.op == OpCode::Conv2d) c = strategy::Choice{name, "", "forced by the test", true, {}, {}, ""};
        return c;
      };
      native::Compiled nc = native::compile_native(m, o);
      ASSERT_EQ(nc.choices.at(0).implementation, name) << nc.choices[0].why;
      const auto& sites = nc.executable->library()->sites(nc.executable->plan().kernel_names[0]);
      ASSERT_EQ(sites.size(), 1u);
      const bool blocked = name == "conv2d.onednn_blocked";
      // x, w, bias[, r], out; the output is the kernel's own argument when the call took every op
      // (the blocked variant leaves a residual add to the kernel).
      const bool whole = !blocked || !residual;
      EXPECT_EQ(sites[0].buffers.size(), whole && residual ? 5u : 4u) << name << " variant " << variant;
      if (whole) {
        EXPECT_GE(sites[0].buffers.back().param, 0) << name << " variant " << variant;
      } else {
        EXPECT_EQ(sites[0].buffers.back().param, -1) << name << " variant " << variant;
      }
      std::vector<Tensor> got = nc.executable->run(in, 0, nullptr);
      for (int64_t i = 0; i < want[0].numel(); ++i)
        ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-4 + 1e-4 * std::abs(want[0].data<float>()[i]))
            << name << " variant " << variant << " element " << i;
    }
}

// A state keeps its constant weight once per layout, not a plain copy (the model's copy is only
// valid during init): primitives made later, for another thread count, get their weight from the
// layout made at init. Their results are the reference's at 1, 2 and again 1 thread.
TEST(ExternState, OneDnnPrimitivesForAnotherThreadCountReuseTheWeight) {
  for (const char* impl : {"conv2d.onednn", "conv2d.onednn_blocked", "dense.onednn"}) {
    const std::string name = impl;
    const bool conv = name != "dense.onednn";
    ir::Expr x = ir::var("x", ir::tensor_type(conv ? Shape{1, 16, 12, 12} : Shape{24, 40}, DType::f32));
    ir::Expr y;
    if (conv) {
      ops::Conv2dAttrs a;
      a.padding = {1, 1, 1, 1};
      y = ir::call(OpCode::Conv2d, {x, ir::constant(topitest::random(DType::f32, {32, 16, 3, 3}, -0.3, 0.3, 21)),
                                    ir::constant(topitest::random(DType::f32, {32}, -1, 1, 22))}, a);
    } else {
      y = ir::call(OpCode::Dense, {x, ir::constant(topitest::random(DType::f32, {48, 40}, -0.3, 0.3, 23))});
    }
    ir::Module m;
    m.functions["main"] = ir::function({x}, y);
    std::vector<Tensor> in = {topitest::random(DType::f32, conv ? Shape{1, 16, 12, 12} : Shape{24, 40}, -1, 1, 24)};
    std::vector<Tensor> want = reference::run_module(m, in).value();
    native::CompileOptions o;
    o.chooser = [&](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target&) {
      std::optional<strategy::Choice> c;
      if (anchor.op == OpCode::Conv2d || anchor.op == OpCode::Dense) c = strategy::Choice{name, "", "forced by the test", true, {}, {}, ""};
      return c;
    };
    native::Compiled nc = native::compile_native(m, o);
    ASSERT_EQ(nc.choices.at(0).implementation, name) << nc.choices[0].why;
    for (int threads : {1, 2, 1}) {
      std::vector<Tensor> got = nc.executable->run(in, threads, nullptr);
      for (int64_t i = 0; i < want[0].numel(); ++i)
        ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-4 + 1e-4 * std::abs(want[0].data<float>()[i]))
            << name << " at " << threads << " threads, element " << i;
    }
  }
}
#endif

}  // namespace
}  // namespace sy
