// Test backends: a set of ops each, runtime by the reference executor.
#include "partition_test_backends.h"

#include <map>

#include "backends/reference/executor.h"
#include "ir/visitor.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::testing {

namespace {

class ReferenceModule : public backends::RuntimeModule {
 public:
  ReferenceModule(const std::vector<backends::ExternFunction>& fns, bool wrong_shape) : wrong_shape_(wrong_shape) {
    for (const auto& f : fns) {
      ir::Module m;
      auto* fn = f.function->as<ir::FunctionNode>();
      m.functions["main"] = ir::function(fn->params, fn->body);
      mods_[f.symbol] = std::move(m);
    }
  }
  std::vector<Tensor> run(const std::string& symbol, const std::vector<Tensor>& inputs) override {
    auto it = mods_.find(symbol);
    if (it == mods_.end()) throw Error("no function " + symbol);
    std::vector<Tensor> out = reference::run_module(it->second, inputs).value();
    if (wrong_shape_)
      for (Tensor& t : out) {
        Shape s = t.shape();
        s.insert(s.begin(), 1);
        t = Tensor(t.dtype(), s);
      }
    return out;
  }
  std::string save() const override { return "test-module-v1"; }

 private:
  std::map<std::string, ir::Module> mods_;
  bool wrong_shape_;
};

}  // namespace

backends::Verdict TestBackend::supports_op(const ir::CallNode& call) const {
  if (ops_.count(call.op)) return backends::Verdict::yes();
  return backends::Verdict::no(name_ + ": " + ops::op_name(call.op) + " is not in its op list");
}

backends::Verdict TestBackend::worth_offloading(const backends::RegionSummary& r) const {
  return always_worth_ ? backends::Verdict::yes() : Backend::worth_offloading(r);
}

std::unique_ptr<backends::RuntimeModule> TestBackend::compile(const std::vector<backends::ExternFunction>& fns, const target::Target&) const {
  for (const auto& f : fns)
    for (const ir::Expr& e : ir::post_order(f.function->as<ir::FunctionNode>()->body, /*into_functions=*/true))
      if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && cannot_build.count(c->op))
        throw Error(name_ + ": cannot build " + ops::op_name(c->op));
  return std::make_unique<ReferenceModule>(fns, wrong_result_shape);
}

std::unique_ptr<backends::RuntimeModule> TestBackend::load(const std::string& bytes,
                                                           const std::vector<backends::ExternFunction>& fns) const {
  if (bytes != "test-module-v1") throw Error(name_ + ": bad module bytes");
  return std::make_unique<ReferenceModule>(fns, wrong_result_shape);
}

}  // namespace sy::testing
