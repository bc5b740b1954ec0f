// The Backend: what c_source claims (and why it declines the rest), compile and load.
// This file plus codegen.cpp (the C) and module.cpp (cc + dlopen) is the whole integration.
#include "backends/c_source/c_source.h"
#include "ops/op.h"

namespace sy::backends {

namespace {

class CSourceBackend : public Backend {
 public:
  std::string name() const override { return "c_source"; }
  std::string description() const override {
    return "example: C for float32 elementwise regions, built by the system C compiler";
  }

  // No composites: single elementwise ops, which the partitioner merges into regions.
  std::vector<CompositeRule> composite_rules() const override { return {}; }

  Verdict supports_op(const ir::CallNode& call) const override {
    const std::string& op = ops::op_name(call.op);
    const ops::OpKind kind = ops::op_def(call.op).kind;
    if (kind != ops::OpKind::Elemwise && kind != ops::OpKind::Broadcast)
      return Verdict::no("c_source: op " + op + " is not elementwise");
    std::vector<ir::Type> types{call.type};
    for (const ir::Expr& a : call.args) types.push_back(a->type);
    for (const ir::Type& t : types) {
      if (!ir::is_tensor(t)) return Verdict::no("c_source: op " + op + " has a non-tensor operand");
      if (t->dtype != DType::f32)
        return Verdict::no("c_source: dtype " + std::string(dtype_name(t->dtype)) + " not supported (float32 only)");
    }
    // Ask the code generator itself, with placeholder operands.
    if (c_source::op_expr(call, std::vector<std::string>(call.args.size(), "v")).empty()) {
      std::string attrs = call.attrs ? ir::attrs_str(*call.attrs) : "";
      return Verdict::no("c_source: op " + op + (attrs.empty() ? "" : " with " + attrs) + " has no C implementation");
    }
    return Verdict::yes();
  }

  // worth_offloading: the default rule (at least two ops) suits an elementwise backend.

  std::unique_ptr<RuntimeModule> compile(const std::vector<ExternFunction>& fns, const target::Target& target) const override {
    c_source::Generated code = c_source::generate(fns);
    std::string library = c_source::compile_shared_library(code.source, target.compiler_flags());
    return std::make_unique<c_source::CModule>(std::move(code), std::move(library));
  }

  // No compiler needed: the C is regenerated (for its metadata) and the saved library dlopened.
  std::unique_ptr<RuntimeModule> load(const std::string& bytes, const std::vector<ExternFunction>& fns) const override {
    return std::make_unique<c_source::CModule>(c_source::generate(fns), bytes);
  }
};

}  // namespace

void register_c_source_backend(BackendRegistry& registry) { registry.add(std::make_unique<CSourceBackend>()); }

}  // namespace sy::backends
