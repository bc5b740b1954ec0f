// Measured placement: a claimed region stays on its backend only when it is faster there (costs
// injected, so that the decision is deterministic), a backend with wrong results is disqualified
// whatever its speed, and real timings of a real backend give a consistent report.
#include <gtest/gtest.h>

#include <cmath>

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
  ir::Expr w = ir::constant(api::random_tensor({8, 8, 3, 3}, DType::f32, 5));
  ir::Expr c = ir::call(OpCode::Relu, {ir::call(OpCode::Conv2d, {x, w}, a)});
  ir::Module m;
  m.functions["main"] = ir::function({x, y}, ir::call(OpCode::Mul, {c, y}));
  return m;
}

partition::PartitionResult partitioned(const std::vector<const backends::Backend*>& bs) {
  partition::PartitionOptions o;
  o.backends = bs;
  return partition::partition_module(model(), o);
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
    ir::Module placed = runtime::place_by_measurement(r.module, {onednn}, po, &r.report, &t);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].offloaded, backend_faster);
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
    std::vector<Tensor> in = {api::random_tensor({1, 8, 10, 10}, DType::f32, 1), api::random_tensor({1, 8, 10, 10}, DType::f32, 2)};
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
  ir::Module placed = runtime::place_by_measurement(r.module, {&wrongmul()}, po, &r.report, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0].offloaded);
  EXPECT_GT(t[0].backend_error, 0.01);
  EXPECT_EQ(regions_left(placed), 0u);
  EXPECT_NE(t[0].why.find("results differ from the reference"), std::string::npos) << t[0].why;
}

TEST(MeasuredPlacement, RealTimingsAreConsistent) {
  const backends::Backend* onednn = backends::BackendRegistry::global().find("onednn");
  if (!onednn) GTEST_SKIP() << "built without the oneDNN backend";
  partition::PartitionResult r = partitioned({onednn});
  runtime::PlacementOptions po;
  po.repeat = 5;
  std::vector<runtime::RegionTiming> t;
  ir::Module placed = runtime::place_by_measurement(r.module, {onednn}, po, &r.report, &t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_GT(t[0].backend_ms, 0);
  EXPECT_GT(t[0].native_ms, 0);
  EXPECT_EQ(t[0].offloaded, t[0].backend_ms < t[0].native_ms);
  EXPECT_EQ(regions_left(placed), t[0].offloaded ? 1u : 0u);
}

}  // namespace
}  // namespace sy
