// The oneDNN integration through a target hook: the backend claims convolution and GEMM
// composites like a BYOC backend but builds no runtime module; its lowering hook turns each region
// into one loop-IR kernel of oneDNN primitive calls (src/externs/onednn's stateful externs), so
// the region's buffers are planned with the native kernels' and its code lands in the same
// library. One of the three ways oneDNN plugs in (docs/integrating.md compares them).
#include <memory>

#include "backends/onednn_hook/onednn_hook.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::backends {

namespace {

class Hook : public LoweringHook {
 public:
  tir::PrimFunc lower(const ir::FunctionNode& fn, const std::string& name, const target::Target& target) const override {
    return onednn_hook::lower_region(fn, name, target);
  }
  std::optional<ir::Expr> split(const ir::FunctionNode& region, const target::Target& target) const override {
    return onednn_hook::split_region(region, target);
  }
};

class OnednnHookBackend : public Backend {
 public:
  std::string name() const override { return "onednn_hook"; }
  std::string description() const override {
    return "oneDNN's conv2d (+bias, residual add, relu/clip/SiLU), pooling and dense/matmul (+bias, relu/gelu "
           "or a residual add) lowered into the native kernels by a target hook, blocked layouts kept between its "
           "convolutions";
  }
  std::vector<CompositeRule> composite_rules() const override { return onednn_hook::rules(); }
  Verdict supports_op(const ir::CallNode& call) const override {
    return Verdict::no("onednn_hook: takes only its composites (conv, GEMM, pooling), not a lone " + ops::op_name(call.op));
  }
  Verdict worth_offloading(const RegionSummary& region) const override {
    return region.flops > 0 ? Verdict::yes() : Verdict::no("onednn_hook: no conv or GEMM in the region");
  }
  std::unique_ptr<RuntimeModule> compile(const std::vector<ExternFunction>&, const target::Target&) const override {
    throw Error("onednn_hook has no runtime module: its regions are lowered into the native kernels by its target hook");
  }
  std::unique_ptr<RuntimeModule> load(const std::string&, const std::vector<ExternFunction>&) const override {
    throw Error("onednn_hook has no runtime module: an artifact holds its kernels in the native library");
  }
  const LoweringHook* lowering_hook() const override { return &hook_; }

 private:
  Hook hook_;
};

}  // namespace

void register_onednn_hook_backend(BackendRegistry& registry) { registry.add(std::make_unique<OnednnHookBackend>()); }

}  // namespace sy::backends
