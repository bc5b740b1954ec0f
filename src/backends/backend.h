// The interface an external integration (BYOC backend) implements, and the registry of backends.
//
// A backend claims, the partitioner decides: it supplies composite patterns and support checks
// that say *why* they reject, a rule for when a region is worth offloading, a codegen that turns
// its external functions into a runtime module, and that module's save/load. Each backend lives in
// one folder under src/backends/<name>/ and is registered by one line of CMake (sy_add_backend).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "pattern/pattern.h"
#include "support/tensor.h"
#include "target/target.h"
#include "tir/stmt.h"

namespace sy::backends {

// A backend's answer for one node; `reason` says why not (printed by `partition --explain`).
struct Verdict {
  bool ok = false;
  std::string reason;
  static Verdict yes() { return {true, ""}; }
  static Verdict no(std::string why) { return {false, std::move(why)}; }
};

// One entry of a backend's ordered composite table. The function built from a match gets the
// attribute Composite=name (name starts with "<backend>.").
struct CompositeRule {
  std::string name;
  pattern::Pattern pattern;
  // dtypes, shapes, attributes of the matched nodes: "" accepts, else the reason.
  pattern::MatchCheck check;
};

// What the partitioner knows about a candidate region when asking whether to offload it.
struct RegionSummary {
  std::vector<ir::Expr> nodes;  // op calls and composite calls, producers first
  int op_count = 0;             // op calls, counting those inside composites
  int64_t flops = 0;
  int64_t boundary_bytes = 0;   // bytes of the region's tensor inputs and outputs
};

// An external function handed to a backend: params are the region's inputs; weights are
// constants inside the body; composite calls (Composite attr) and plain op calls form the body;
// the result is a tensor or a tuple of tensors.
struct ExternFunction {
  std::string symbol;  // the module-level name, e.g. "mylib_0"
  ir::Expr function;   // a FunctionNode with Compiler=<backend>
};

// A compiled backend module: runs its external functions. Built by Backend::compile, or by
// Backend::load from the bytes save() returned plus the same external functions.
class RuntimeModule {
 public:
  virtual ~RuntimeModule() = default;
  // Runs `symbol` on inputs (one per parameter, in order); returns the flattened results.
  // Throws sy::Error on bad inputs.
  virtual std::vector<Tensor> run(const std::string& symbol, const std::vector<Tensor>& inputs) = 0;
  // The module's own state (e.g. a compiled shared library); weights are not included: they
  // travel once, in the external functions' constants.
  virtual std::string save() const = 0;
  // The intermediate memory the module plans for itself (its regions' activations at the current
  // thread count, after reuse), reported beside the native kernels' arena; -1: not known.
  virtual int64_t activation_bytes() { return -1; }
};

// A target hook (TVM's RelayToTIR): a backend that has one does not compile its regions into a
// runtime module; each region is lowered by the hook into a loop-IR kernel that joins the native
// kernels. It is planned with them (its buffers are in the native arena), built into the same
// library by the same code generator and saved in the artifact like them, so loading needs no
// backend at all. The region arrives with its weights lifted to parameters; the call passes them
// as model constants, which a stateful extern call in the kernel sees at init
// (include/switchyard/extern_abi.h).
class LoweringHook {
 public:
  virtual ~LoweringHook() = default;
  // fn: the region (Compiler=<backend>; its composite calls and op calls); name: the kernel's
  // symbol. The kernel's parameters are fn's, then one output per result tensor (as
  // native::lower_function's). Throws sy::Error for a region it cannot lower.
  virtual tir::PrimFunc lower(const ir::FunctionNode& fn, const std::string& name, const target::Target& target) const = 0;
  // A hook may split a region into several kernels, so that the tensors between them are planned
  // by the native memory planner (in the arena every kernel shares) instead of being temporaries
  // of one kernel: it returns the region as a function of the same parameters whose body calls
  // functions with the attribute LoweredBy=<backend> (each becomes a kernel, given to lower()
  // with its weights lifted to parameters), tuples and their items. nullopt: one kernel.
  virtual std::optional<ir::Expr> split(const ir::FunctionNode& region, const target::Target& target) const {
    (void)region;
    (void)target;
    return std::nullopt;
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;         // "mylib"
  virtual std::string description() const = 0;  // one line, for --help and `partition`
  // Ordered: earlier rules are tried first.
  virtual std::vector<CompositeRule> composite_rules() const = 0;
  // Whether the backend takes a single op call that is not part of a composite.
  virtual Verdict supports_op(const ir::CallNode& call) const = 0;
  // Whether a maximal region of this backend pays for itself. Default: it contains a composite
  // or a compute-heavy op (conv, dense, matmul, pooling, normalisation, softmax), or at least
  // two ops (a lone elementwise op between native ops costs more in copies than it saves).
  virtual Verdict worth_offloading(const RegionSummary& region) const;
  // Builds the module for a target: code the backend generates (e.g. C) uses only its features
  // (target.compiler_flags()); a library that dispatches on the CPU at run time may ignore it.
  virtual std::unique_ptr<RuntimeModule> compile(const std::vector<ExternFunction>& fns,
                                                 const target::Target& target) const = 0;
  virtual std::unique_ptr<RuntimeModule> load(const std::string& bytes,
                                              const std::vector<ExternFunction>& fns) const = 0;
  // Non-null for a backend whose regions join the native kernels through a target hook; its
  // compile() and load() are then not called by the compile pipeline.
  virtual const LoweringHook* lowering_hook() const { return nullptr; }
};

class BackendRegistry {
 public:
  // The registry with every backend built into this binary, filled before main by
  // sy::register_builtins() (generated by cmake/backends.cmake from the enabled backends).
  static BackendRegistry& global();
  void add(std::unique_ptr<Backend> b);  // throws if the name is taken
  const Backend* find(const std::string& name) const;
  // Throws sy::Error listing the available backends.
  const Backend& get(const std::string& name) const;
  std::vector<std::string> names() const;
  std::vector<const Backend*> all() const;  // in names() order

 private:
  std::map<std::string, std::unique_ptr<Backend>> backends_;
};

// Defined in a file CMake generates from the enabled backends (see sy_add_backend).
void register_builtin_backends(BackendRegistry& registry);

}  // namespace sy::backends
