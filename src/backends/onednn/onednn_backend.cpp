// The oneDNN BYOC backend: composite table, per-op support checks, region rule, codegen.
#include <oneapi/dnnl/dnnl.hpp>

#include "backends/backend.h"
#include "backends/onednn/onednn_module.h"
#include "backends/onednn/onednn_ops.h"
#include "backends/onednn/onednn_rules.h"
#include "ops/op.h"

namespace sy::backends {

namespace onednn {
namespace {

// Ops that only move or relabel data: a region of nothing else computes nothing.
bool layout_only(ops::OpCode op) {
  switch (op) {
    case ops::OpCode::Reshape: case ops::OpCode::Identity: case ops::OpCode::Pad: case ops::OpCode::Cast:
    case ops::OpCode::Concat: case ops::OpCode::Transpose:
      return true;
    default: return false;
  }
}

class OnednnBackend : public Backend {
 public:
  std::string name() const override { return "onednn"; }
  std::string description() const override {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
           " CPU primitives: conv/dense/matmul with fused post-ops, blocked layouts kept inside regions";
  }
  std::vector<CompositeRule> composite_rules() const override { return make_composite_rules(); }
  Verdict supports_op(const ir::CallNode& call) const override {
    std::string r = check_op(call);
    return r.empty() ? Verdict::yes() : Verdict::no(r);
  }
  Verdict worth_offloading(const RegionSummary& region) const override {
    bool computes = false;
    for (const ir::Expr& n : region.nodes) {
      auto* c = n->as<ir::CallNode>();
      if (c && (!c->is_op() || !layout_only(c->op))) computes = true;
    }
    if (!computes) return Verdict::no("onednn: only layout ops (reshape, concat, transpose, ...): nothing to compute");
    return Backend::worth_offloading(region);
  }
  std::unique_ptr<RuntimeModule> compile(const std::vector<ExternFunction>& fns, const target::Target&) const override {
    return std::make_unique<OnednnModule>(fns);
  }
  std::unique_ptr<RuntimeModule> load(const std::string& bytes, const std::vector<ExternFunction>& fns) const override {
    return OnednnModule::load(bytes, fns);
  }
};

}  // namespace
}  // namespace onednn

void register_onednn_backend(BackendRegistry& registry) {
  registry.add(std::make_unique<onednn::OnednnBackend>());
}

}  // namespace sy::backends
