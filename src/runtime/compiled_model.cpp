// Building and running a partitioned module.
#include "runtime/compiled_model.h"

#include "target/host.h"

#include <exception>
#include <set>

#include "backends/reference/executor.h"
#include "partition/inline_regions.h"
#include "partition/partition_graph.h"
#include "support/error.h"

namespace sy::runtime {

namespace {

const backends::Backend& find_backend(const std::string& name, const std::vector<const backends::Backend*>& available) {
  for (const backends::Backend* b : available)
    if (b->name() == name) return *b;
  throw Error("the model needs backend '" + name + "', which is not available in this build");
}

}  // namespace

std::map<std::string, native::LoweringHookFn> lowering_hooks(const std::vector<const backends::Backend*>& backends) {
  std::map<std::string, native::LoweringHookFn> hooks;
  for (const backends::Backend* b : backends)
    if (const backends::LoweringHook* h = b->lowering_hook())
      hooks[b->name()] = [h](const ir::FunctionNode& fn, const std::string& name, const target::Target& t) {
        return h->lower(fn, name, t);
      };
  return hooks;
}

std::map<std::string, native::RegionSplitFn> region_splits(const std::vector<const backends::Backend*>& backends) {
  std::map<std::string, native::RegionSplitFn> splits;
  for (const backends::Backend* b : backends)
    if (const backends::LoweringHook* h = b->lowering_hook())
      splits[b->name()] = [h](const ir::FunctionNode& fn, const target::Target& t) { return h->split(fn, t); };
  return splits;
}

CompiledModel build_modules(const ir::Module& partitioned, const std::vector<const backends::Backend*>& available,
                            const target::Target& target) {
  CompiledModel cm;
  cm.target = target;
  std::set<std::string> failed;
  for (auto& [backend, fns] : partition::extern_functions(partitioned)) {
    const backends::Backend& b = find_backend(backend, available);
    if (b.lowering_hook()) continue;  // its regions join the native kernels (native::compile_native)
    try {
      cm.modules[backend] = b.compile(fns, target);
    } catch (const std::exception& all) {  // sy::Error, or the library's own (dnnl::error)
      // Only on failure: build each function alone to learn which ones the backend cannot take.
      std::vector<backends::ExternFunction> ok;
      for (const auto& f : fns) {
        try {
          b.compile({f}, target);
          ok.push_back(f);
        } catch (const std::exception& e) {
          failed.insert(f.symbol);
          cm.fallbacks.push_back(backend + " could not build region @" + f.symbol + " (" + e.what() +
                                 "); it runs natively");
        }
      }
      if (ok.size() == fns.size()) throw Error(backend + ": building its regions together failed: " + all.what());
      if (!ok.empty()) cm.modules[backend] = b.compile(ok, target);
      fns = ok;
    }
    for (const auto& f : fns) cm.backend_of[f.symbol] = backend;
  }
  cm.module = partition::inline_regions(partitioned, failed);
  return cm;
}

CompiledModel build_runnable(const ir::Module& partitioned, const std::vector<const backends::Backend*>& available,
                             const native::CompileOptions& native) {
  CompiledModel cm = build_modules(partitioned, available, native.target.value_or(target::host()));
  if (!cm.fallbacks.empty()) throw Error(cm.fallbacks[0]);
  native::Compiled nc = native::compile_native(cm.module, native);
  if (!nc.fallbacks.empty()) throw Error("kernel " + nc.fallbacks[0].first + " has no native implementation (" + nc.fallbacks[0].second + ")");
  cm.module = std::move(nc.fused);
  cm.native = std::move(nc.executable);
  return cm;
}

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs, int threads, native::CallTimes* times) const {
  // Backend code (c_source's library) is built for the target too; the native executable checks
  // its own kernels, this covers a model without any.
  if (!modules.empty())
    if (std::string why = target::cannot_run_here(target, "the model's compiled code"); !why.empty()) throw Error(why);
  auto external = [this](const std::string& symbol, const std::vector<Tensor>& args) {
    auto it = backend_of.find(symbol);
    SY_CHECK(it != backend_of.end()) << "no runtime module holds @" << symbol;
    try {
      return modules.at(it->second)->run(symbol, args);
    } catch (const std::exception& e) {
      throw Error(it->second + " region @" + symbol + ": " + e.what());
    }
  };
  if (native) return native->run(inputs, threads, external, times);
  reference::ExecOptions opts;
  opts.threads = threads;
  opts.external = external;
  Result<std::vector<Tensor>> r = reference::run_module(module, inputs, opts);
  if (!r.is_ok()) throw Error(r.status().message());
  return std::move(r.value());
}

}  // namespace sy::runtime
