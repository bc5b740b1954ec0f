// Measured placement: a claimed region stays on its backend only when it is faster there (costs
// injected, so that the decision is deterministic), a backend with wrong results is disqualified
// whatever its speed, and real timings of a real backend give a consistent report.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>

#include "api/inputs.h"
#include "backends/backend.h"
#include "backends/reference/executor.h"
#include "ir/module.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "partition/partition_graph.h"
#include "partition/pipeline.h"
#include "runtime/compiled_model.h"
#include "runtime/measured_placement.h"
#include "runtime/region_timing.h"
#include "partition_test_backends.h"
#include "support/random_tensor.h"
#include "target/host.h"

namespace sy {
namespace {

using ops::OpCode;

// A backend that claims multiply and computes it wrong (adds instead): the numeric check must
// keep it out even when it is "faster".
class WrongMultiply : public backends::Backend {
 public:
  std::string name() const override { return "wrongmul"; }
  std::string description() const override { return "test: multiply computed as add"; }
  std::vector<backends::CompositeRule> composite_rules() const override { return {}; }
  backends::Verdict supports_op(const ir::CallNode& c) const override {
    return c.op == OpCode::Mul ? backends::Verdict::yes() : backends::Verdict::no("wrongmul: not multiply");
  }
  backends::Verdict worth_offloading(const backends::RegionSummary&) const override { return backends::Verdict::yes(); }
  std::unique_ptr<backends::RuntimeModule> compile(const std::vector<backends::ExternFunction>&,
                                                   const target::Target&) const override {
    struct M : backends::RuntimeModule {
      std::vector<Tensor> run(const std::string&, const std::vector<Tensor>& in) override {
        Tensor out(DType::f32, in[0].shape());
        for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = in[0].data<float>()[i] + in[1].data<float>()[i];
        return {out};
      }
      std::string save() const override { return ""; }
    };
    return std::make_unique<M>();
  }
  std::unique_ptr<backends::RuntimeModule> load(const std::string&, const std::vector<backends::ExternFunction>& f) const override {
    return compile(f, target::host());
  }
};

const backends::Backend& wrongmul() {
  static const backends::Backend* b = [] {
    auto& reg = backends::BackendRegistry::global();
    if (!reg.find("wrongmul")) reg.add(std::make_unique<WrongMultiply>());
    return reg.find("wrongmul");
  }();
  return *b;
}

// conv -> relu -> multiply by a second input: oneDNN takes conv+relu, wrongmul the multiply.
ir::Module model() {
  ir::Expr x = ir::var("x", ir::tensor_type({1, 8, 10, 10}, DType::f32));
  ir::Expr y = ir::var("y", ir::tensor_type({1, 8, 10, 10}, DType::f32));
  ops::Conv2dAttrs a;
  a.strides = {1, 1};
  a.padding = {1, 1, 1, 1};
  a.dilation = {1, 1};
  a.groups = 1;
  ir::Expr w = ir::constant(sy::random_tensor({8, 8, 3, 3}, DType::f32, 5));
  ir::Expr c = ir::call(OpCode::Relu, {ir::call(OpCode::Conv2d, {x, w}, a)});
  ir::Module m;
  m.functions["main"] = ir::function({x, y}, ir::call(OpCode::Mul, {c, y}));
  return m;
}

partition::PartitionOptions options(const std::vector<const backends::Backend*>& bs) {
  partition::PartitionOptions o;
  o.backends = bs;
  return o;
}

partition::PartitionResult partitioned(const std::vector<const backends::Backend*>& bs) {
  return partition::partition_module(model(), options(bs));
}

size_t regions_left(const ir::Module& m) {
  size_t n = 0;
  for (const auto& [b, fns] : partition::extern_functions(m)) n += fns.size();
  return n;
}

TEST(MeasuredPlacement, TheFasterCandidateWinsAndTheReportSaysBothTimes) {
  const backends::Backend* onednn = backends::BackendRegistry::global().find("onednn");
  if (!onednn) GTEST_SKIP() << "built without the oneDNN backend";
  for (bool backend_faster : {true, false}) {
    partition::PartitionResult r = partitioned({onednn});
    ASSERT_EQ(regions_left(r.module), 1u);
    runtime::PlacementOptions po;
    po.cost = [&](const std::string&, const std::string& who) -> std::optional<double> {
      return who == "native" ? (backend_faster ? 2.0 : 1.0) : (backend_faster ? 1.0 : 2.0);
    };
    std::vector<runtime::RegionTiming> t;
    r = runtime::place_by_measurement(model(), options({onednn}), po, &t);
    const ir::Module& placed = r.module;
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].decision == runtime::RegionTiming::Decision::Backend, backend_faster);
    EXPECT_EQ(regions_left(placed), backend_faster ? 1u : 0u);
    EXPECT_LT(t[0].backend_error, 1e-4);
    EXPECT_LT(t[0].native_error, 1e-4);
    ASSERT_EQ(r.report.regions.size(), 1u);
    EXPECT_EQ(r.report.regions[0].offloaded, backend_faster);
    EXPECT_NE(r.report.regions[0].measured.find(backend_faster ? "onednn 1.000 ms, native 2.000 ms"
                                                               : "onednn 2.000 ms, native 1.000 ms"),
              std::string::npos)
        << r.report.regions[0].measured;
    // The nodes' decisions follow: on oneDNN when it won, native with the measurement when not.
    int on_backend = 0, with_measurement = 0;
    for (const partition::NodeDecision& d : r.report.decisions) {
      on_backend += d.backend == "onednn";
      for (const auto& [b, why] : d.rejections) with_measurement += b == "onednn" && why.find("measured: ") != std::string::npos;
    }
    EXPECT_EQ(on_backend > 0, backend_faster);
    EXPECT_EQ(with_measurement > 0, !backend_faster);
    EXPECT_EQ(r.report.regions[0].symbol.empty(), !backend_faster);
    // Either way the placed model computes what the original does.
    std::vector<Tensor> in = {sy::random_tensor({1, 8, 10, 10}, DType::f32, 1), sy::random_tensor({1, 8, 10, 10}, DType::f32, 2)};
    runtime::CompiledModel cm = runtime::build_modules(placed, {onednn}, target::host());
    std::vector<Tensor> got = cm.run(in, 0);
    std::vector<Tensor> want = reference::run_module(model(), in).value();
    for (int64_t i = 0; i < want[0].numel(); ++i)
      ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-4 * (1 + std::abs(want[0].data<float>()[i])));
  }
}

TEST(MeasuredPlacement, AWrongBackendIsDisqualifiedHoweverFast) {
  partition::PartitionResult r = partitioned({&wrongmul()});
  ASSERT_EQ(regions_left(r.module), 1u);
  runtime::PlacementOptions po;
  po.cost = [](const std::string&, const std::string& who) -> std::optional<double> { return who == "native" ? 5.0 : 0.1; };
  std::vector<runtime::RegionTiming> t;
  ir::Module placed = runtime::place_by_measurement(model(), options({&wrongmul()}), po, &t).module;
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].decision, runtime::RegionTiming::Decision::Native);
  EXPECT_GT(t[0].backend_error, 0.01);
  EXPECT_EQ(regions_left(placed), 0u);
  EXPECT_NE(t[0].why.find("results differ from the reference"), std::string::npos) << t[0].why;
}

TEST(MeasuredPlacement, RealTimingsAreConsistent) {
  const backends::Backend* onednn = backends::BackendRegistry::global().find("onednn");
  if (!onednn) GTEST_SKIP() << "built without the oneDNN backend";
  runtime::PlacementOptions po;
  po.repeat = 5;
  std::vector<runtime::RegionTiming> t;
  ir::Module placed = runtime::place_by_measurement(model(), options({onednn}), po, &t).module;
  ASSERT_EQ(t.size(), 1u);
  EXPECT_GT(t[0].backend_ms, 0);
  EXPECT_GT(t[0].native_ms, 0);
  using D = runtime::RegionTiming::Decision;
  if (t[0].decision != D::Split) EXPECT_EQ(t[0].decision == D::Backend, t[0].backend_ms < t[0].native_ms);
  else EXPECT_LT(t[0].split_ms, std::min(t[0].backend_ms, t[0].native_ms));
  EXPECT_EQ(regions_left(placed) > 0, t[0].decision != D::Native);
}

// x + y -> * z -> + w: three nodes a test backend (computing with the reference executor) takes
// as one region.
ir::Module chain() {
  auto t = ir::tensor_type({1, 64}, DType::f32);
  ir::Expr x = ir::var("x", t), y = ir::var("y", t), z = ir::var("z", t), w = ir::var("w", t);
  ir::Expr a = ir::call(OpCode::Add, {x, y});
  ir::Expr m = ir::call(OpCode::Mul, {a, z});
  ir::Module mod;
  mod.functions["main"] = ir::function({x, y, z, w}, ir::call(OpCode::Add, {m, w}));
  return mod;
}

const testing::TestBackend& elem() {
  static testing::TestBackend b("elem", {OpCode::Add, OpCode::Mul}, true);
  return b;
}

// Costs by what is timed: the whole region on the backend, natively or split, and each node
// alone ("/k").
struct Costs {
  double whole_backend, whole_native;
  std::vector<double> alone_backend, alone_native;
  double split = 0;
  int asked = 0;
  std::optional<double> operator()(const std::string& what, const std::string& who) {
    ++asked;
    size_t slash = what.find('/');
    if (slash == std::string::npos) return who == "native" ? whole_native : who == "split" ? split : whole_backend;
    size_t k = std::stoul(what.substr(slash + 1));
    return who == "native" ? alone_native.at(k) : alone_backend.at(k);
  }
};

// A placed module built with its backends and the native kernels, run on `in` (1 thread).
std::vector<Tensor> run_placed(const ir::Module& placed, const std::vector<const backends::Backend*>& bs,
                               const std::vector<Tensor>& in) {
  native::CompileOptions no;
  no.target = target::host();
  return runtime::build_runnable(placed, bs, no).run(in, 1);
}

// chain() placed across `bs` gives the reference's values.
void expect_same_values_on(const ir::Module& placed, const std::vector<const backends::Backend*>& bs) {
  std::vector<Tensor> in;
  for (int i = 0; i < 4; ++i) in.push_back(sy::random_tensor({1, 64}, DType::f32, 10 + i));
  std::vector<Tensor> got = run_placed(placed, bs, in);
  std::vector<Tensor> want = reference::run_module(chain(), in).value();
  for (int64_t i = 0; i < want[0].numel(); ++i)
    ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-5 * (1 + std::abs(want[0].data<float>()[i])));
}

void expect_same_values(const ir::Module& placed) { expect_same_values_on(placed, {&elem()}); }

// The middle node is cheaper natively (3.5 against 5 alone). Whether splitting it off pays
// depends on what its two values cost to cross: fitted from the nodes alone (7 ms together)
// against the whole region. (The native costs are scaled by 8 / 7.5 to the whole region's.)
TEST(MeasuredPlacement, ATransitionCostDecidesTheSplit) {
  using D = runtime::RegionTiming::Decision;
  for (bool crossings_cost : {true, false}) {
    SCOPED_TRACE(crossings_cost ? "crossings cost 0.5 ms each" : "crossings are free");
    // Whole on the backend: 5 ms (the nodes alone pay 2 ms more: their four internal crossings),
    // or 7 ms (nothing more: crossing is free).
    Costs c{crossings_cost ? 5.0 : 7.0, 8.0, {1, 5, 1}, {2, 3.5, 2}};
    c.split = 5.5;
    runtime::PlacementOptions po;
    po.cost = std::ref(c);
    std::vector<runtime::RegionTiming> t;
    partition::PartitionResult r = runtime::place_by_measurement(chain(), options({&elem()}), po, &t);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].nodes, 3);
    if (crossings_cost) {
      // The split saves 1.27 ms on the middle node and pays 2 crossings of 0.5 ms more than the
      // whole region's 5 ms: 5.73 ms > 5 ms.
      EXPECT_EQ(t[0].decision, D::Backend) << t[0].why;
      EXPECT_EQ(t[0].split_ms, 0) << "the model's best split is not cheaper: not built";
      EXPECT_EQ(regions_left(r.module), 1u);
    } else {
      EXPECT_EQ(t[0].decision, D::Split) << t[0].why;
      EXPECT_NEAR(t[0].split_model_ms, 1 + 3.5 * 8 / 7.5 + 1, 1e-9);
      EXPECT_NEAR(t[0].split_ms, 5.5, 1e-9);  // built and timed: two parts on the backend, the middle native
      EXPECT_EQ(t[0].split_backend_nodes, 2);
      EXPECT_EQ(regions_left(r.module), 2u);
      EXPECT_EQ(t[0].placed_as.size(), 2u);
      // The middle node's decision says why it runs natively.
      int split_off = 0;
      for (const partition::NodeDecision& d : r.report.decisions)
        for (const auto& [b, why] : d.rejections) split_off += why.rfind("split off its region: measured: ", 0) == 0;
      EXPECT_EQ(split_off, 1);
    }
    expect_same_values(r.module);
  }
}

// A split the model favours is built and timed beside the whole region; if the timing does not
// confirm it, the region stays whole.
TEST(MeasuredPlacement, ASplitIsTakenOnlyIfItsTimingConfirmsIt) {
  Costs c{7.0, 8.0, {1, 5, 1}, {2, 3.5, 2}};
  c.split = 8.5;
  runtime::PlacementOptions po;
  po.cost = std::ref(c);
  std::vector<runtime::RegionTiming> t;
  partition::PartitionResult r = runtime::place_by_measurement(chain(), options({&elem()}), po, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].decision, runtime::RegionTiming::Decision::Backend) << t[0].why;
  EXPECT_NEAR(t[0].split_ms, 8.5, 1e-9);
  EXPECT_EQ(regions_left(r.module), 1u);
}

// Placement records: the second placement of the same model measures nothing and decides as the
// first did, even where timing it now would decide otherwise.
TEST(MeasuredPlacement, RecordsMakeTheSecondPlacementMeasureNothing) {
  char path[] = "/tmp/sy_placement_records_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::remove(path);
  using D = runtime::RegionTiming::Decision;
  Costs first{7.0, 8.0, {1, 5, 1}, {2, 3.5, 2}};
  first.split = 5.5;
  runtime::PlacementOptions po;
  po.records = path;
  po.cost = std::ref(first);
  std::vector<runtime::RegionTiming> t;
  runtime::place_by_measurement(chain(), options({&elem()}), po, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].decision, D::Split);
  EXPECT_FALSE(t[0].from_records);
  std::ifstream f(path);
  std::string line;
  int lines = 0;
  while (std::getline(f, line)) lines += line.find("\"op\":\"placement\"") != std::string::npos;
  EXPECT_EQ(lines, 3) << "the backend, native and the split";

  Costs second{1.0, 9.0, {1, 1, 1}, {9, 9, 9}};  // would keep it whole on the backend
  po.cost = std::ref(second);
  partition::PartitionResult r = runtime::place_by_measurement(chain(), options({&elem()}), po, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0].from_records);
  EXPECT_EQ(t[0].decision, D::Split) << t[0].why;
  EXPECT_EQ(second.asked, 0) << "nothing timed";
  EXPECT_EQ(regions_left(r.module), 2u);
  expect_same_values(r.module);
  // Another thread count is another measurement.
  po.threads = 1;
  runtime::place_by_measurement(chain(), options({&elem()}), po, &t);
  EXPECT_FALSE(t[0].from_records);
  std::remove(path);
}

// A second backend that takes only the adds of chain(): asked for elem's region, it takes the
// two adds and leaves the multiply to the native kernels.
const testing::TestBackend& adds() {
  static testing::TestBackend b("adds", {OpCode::Add}, true);
  return b;
}

// Whole-region costs by who runs it (the nodes alone: native cheaper, so no split pays).
std::function<std::optional<double>(const std::string&, const std::string&)> by_backend(double elem_ms, double adds_ms,
                                                                                    int* asked) {
  return [=](const std::string& what, const std::string& who) -> std::optional<double> {
    ++*asked;
    if (what.find('/') != std::string::npos) return who == "native" ? 1.0 : 9.0;
    return who == "native" ? 8.0 : who == "adds" ? adds_ms : elem_ms;
  };
}

// The rules give chain() to elem, the first backend. Measured placement also asks adds for the
// region; faster by more than the margin, adds takes it (its two adds; the multiply runs
// natively), the report says so, the placed module computes the same, and the records replay it.
TEST(MeasuredPlacement, AnotherBackendTakesTheRegionWhenItIsFaster) {
  using D = runtime::RegionTiming::Decision;
  char path[] = "/tmp/sy_placement_others_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::remove(path);
  const std::vector<const backends::Backend*> bs{&elem(), &adds()};
  int asked = 0;
  runtime::PlacementOptions po;
  po.records = path;
  po.cost = by_backend(7.0, 3.0, &asked);
  std::vector<runtime::RegionTiming> t;
  partition::PartitionResult r = runtime::place_by_measurement(chain(), options(bs), po, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].decision, D::Other) << t[0].why;
  EXPECT_EQ(t[0].other, "adds");
  ASSERT_EQ(t[0].others.size(), 1u);
  EXPECT_EQ(t[0].others[0].offloaded, 2);
  EXPECT_NE(t[0].why.find("adds 3.000 ms: adds fastest"), std::string::npos) << t[0].why;
  std::map<std::string, size_t> by;
  for (const auto& [b, fns] : partition::extern_functions(r.module)) by[b] = fns.size();
  EXPECT_EQ(by["adds"], 2u);
  EXPECT_EQ(by.count("elem"), 0u);
  EXPECT_EQ(t[0].placed_as.size(), 2u);
  int on_adds = 0, elem_listed_off = 0;
  for (const partition::RegionReport& g : r.report.regions) {
    on_adds += g.offloaded && g.backend == "adds" && !g.symbol.empty();
    elem_listed_off += !g.offloaded && g.backend == "elem" && g.why_not.find("adds fastest") != std::string::npos;
  }
  EXPECT_EQ(on_adds, 2);
  EXPECT_EQ(elem_listed_off, 1);
  for (const partition::NodeDecision& d : r.report.decisions)
    EXPECT_NE(d.why.find("its region went to adds"), std::string::npos) << d.node << ": " << d.why;
  expect_same_values_on(r.module, bs);

  // The records decide the second time: nothing is timed, and adds takes it again.
  asked = 0;
  po.cost = by_backend(1.0, 9.0, &asked);
  r = runtime::place_by_measurement(chain(), options(bs), po, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0].from_records);
  EXPECT_EQ(t[0].decision, D::Other) << t[0].why;
  EXPECT_EQ(asked, 0);
  expect_same_values_on(r.module, bs);
  std::remove(path);
}

// Within the margin (2%), the region stays where the rules put it: a placement must not flip
// between runs on noise.
TEST(MeasuredPlacement, AnotherBackendWithinTheMarginDoesNotTakeTheRegion) {
  int asked = 0;
  runtime::PlacementOptions po;
  po.cost = by_backend(7.0, 6.9, &asked);
  std::vector<runtime::RegionTiming> t;
  partition::PartitionResult r = runtime::place_by_measurement(chain(), options({&elem(), &adds()}), po, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].decision, runtime::RegionTiming::Decision::Backend) << t[0].why;
  EXPECT_TRUE(t[0].other.empty());
  for (const auto& [b, fns] : partition::extern_functions(r.module)) EXPECT_EQ(b, "elem");
}

// A backend whose results are wrong loses the region; another backend that computes it right
// takes it when faster than native.
TEST(MeasuredPlacement, AnotherBackendTakesWhatAWrongOneLost) {
  testing::TestBackend muls("muls", {OpCode::Mul}, true);
  const std::vector<const backends::Backend*> bs{&wrongmul(), &muls};
  runtime::PlacementOptions po;
  po.cost = [](const std::string&, const std::string& who) -> std::optional<double> { return who == "native" ? 5.0 : 0.1; };
  std::vector<runtime::RegionTiming> t;
  partition::PartitionResult r = runtime::place_by_measurement(model(), options(bs), po, &t);
  const runtime::RegionTiming* mul = nullptr;
  for (const runtime::RegionTiming& x : t)
    if (x.backend == "wrongmul") mul = &x;
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->decision, runtime::RegionTiming::Decision::Other) << mul->why;
  EXPECT_EQ(mul->other, "muls");
  EXPECT_NE(mul->why.find("results differ from the reference"), std::string::npos) << mul->why;
  std::vector<Tensor> in = {sy::random_tensor({1, 8, 10, 10}, DType::f32, 1), sy::random_tensor({1, 8, 10, 10}, DType::f32, 2)};
  std::vector<Tensor> got = run_placed(r.module, bs, in);
  std::vector<Tensor> want = reference::run_module(model(), in).value();
  for (int64_t i = 0; i < want[0].numel(); ++i)
    ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-4 * (1 + std::abs(want[0].data<float>()[i])));
}

// The end-to-end check: the model placed as measured (elem's region, kept: adds is within the
// margin on it) is timed beside each backend alone and native alone. A single choice faster
// beyond the margin takes the model; within it, the measured placement stays.
TEST(MeasuredPlacement, TheEndToEndCheckTakesAFasterSingleChoice) {
  for (double adds_alone : {3.0, 6.9}) {
    int asked = 0;
    auto regions = by_backend(7.0, 6.95, &asked);
    runtime::PlacementOptions po;
    po.end_to_end = true;
    po.cost = [&](const std::string& what, const std::string& who) -> std::optional<double> {
      if (what != "model") return regions(what, who);
      return who == "measured" ? 7.0 : who == "adds" ? adds_alone : 8.0;
    };
    std::vector<runtime::RegionTiming> t;
    runtime::WholeModelTiming w;
    partition::PartitionResult r = runtime::place_by_measurement(chain(), options({&elem(), &adds()}), po, &t, &w);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].decision, runtime::RegionTiming::Decision::Backend) << t[0].why;
    const bool taken = adds_alone < 7.0 * 0.98;
    EXPECT_EQ(w.winner, taken ? "adds" : "measured");
    ASSERT_EQ(w.candidates.size(), 4u);  // measured, elem alone (the same), adds alone, native
    EXPECT_EQ(w.candidates[1].same_as, "measured");
    EXPECT_NEAR(w.candidates[2].ms, adds_alone, 1e-9);
    for (const auto& [b, fns] : partition::extern_functions(r.module)) EXPECT_EQ(b, taken ? "adds" : "elem");
    const std::string line = runtime::end_to_end_line(w);
    EXPECT_NE(line.find(taken ? "adds alone taken" : "the measured placement kept"), std::string::npos) << line;
    EXPECT_NE(line.find("elem alone (the same placement as measured)"), std::string::npos) << line;
    expect_same_values_on(r.module, {&elem(), &adds()});
  }
}

// A single choice whose results are wrong is disqualified from the end-to-end check however fast.
TEST(MeasuredPlacement, TheEndToEndCheckDisqualifiesAWrongSingleChoice) {
  testing::TestBackend muls("muls", {OpCode::Mul}, true);
  runtime::PlacementOptions po;
  po.end_to_end = true;
  po.cost = [](const std::string& what, const std::string& who) -> std::optional<double> {
    if (what == "model") return who == "wrongmul" ? 0.1 : who == "measured" ? 2.0 : 5.0;
    return who == "native" ? 5.0 : 0.1;
  };
  std::vector<runtime::RegionTiming> t;
  runtime::WholeModelTiming w;
  partition::PartitionResult r = runtime::place_by_measurement(model(), options({&wrongmul(), &muls}), po, &t, &w);
  EXPECT_EQ(w.winner, "measured");
  bool disqualified = false;
  for (const runtime::WholeModelTiming::Candidate& c : w.candidates)
    if (c.name == "wrongmul") disqualified = c.failure.find("results differ from the reference") != std::string::npos;
  EXPECT_TRUE(disqualified) << runtime::end_to_end_line(w);
  for (const auto& [b, fns] : partition::extern_functions(r.module)) EXPECT_EQ(b, "muls");
}

// Candidates are timed as a deployed model runs, each run after a run of the same candidate: here
// `a` is fast only after itself (its data still in the caches) and `b` is as fast either way. One
// run each in turn timed every run of `a` cold, and `b` won; in turns, `a` wins by its real cost.
TEST(MeasuredPlacement, CandidatesAreTimedAsTheyRunBackToBack) {
  char last = 0;
  std::string order;
  auto run = [&](char who, int warm_us, int cold_us) {
    return [&, who, warm_us, cold_us] {
      ::usleep(static_cast<useconds_t>(last == who ? warm_us : cold_us));
      last = who;
      order += who;
    };
  };
  runtime::PlacementOptions po;
  po.warmup = 1;
  po.repeat = 9;
  std::vector<double> ms = runtime::time_alternately({run('a', 1000, 6000), run('b', 3000, 3000)}, {std::nullopt, std::nullopt}, po);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_LT(ms[0], 2.5) << order;
  EXPECT_GT(ms[1], 2.5) << order;
  EXPECT_LT(ms[0], ms[1]) << order;
  // Turns alternate (a machine slowing down meets both): a, then b, then a again, in blocks.
  EXPECT_EQ(order.substr(0, 2), "ab");
  EXPECT_NE(order.find("aaaabbbbaaaa"), std::string::npos) << order;
}

}  // namespace
}  // namespace sy
