// Building and running a partitioned module.
#include "runtime/compiled_model.h"

#include "backends/reference/executor.h"
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

CompiledModel build_modules(const ir::Module& partitioned, const std::vector<const backends::Backend*>& available) {
  CompiledModel cm;
  cm.module = partitioned;
  for (auto& [backend, fns] : partition::extern_functions(partitioned)) {
    const backends::Backend& b = find_backend(backend, available);
    cm.modules[backend] = b.compile(fns);
    for (const auto& f : fns) cm.backend_of[f.symbol] = backend;
  }
  return cm;
}

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs, int threads, native::CallTimes* times) const {
  auto external = [this](const std::string& symbol, const std::vector<Tensor>& args) {
    auto it = backend_of.find(symbol);
    SY_CHECK(it != backend_of.end()) << "no runtime module holds @" << symbol;
    return modules.at(it->second)->run(symbol, args);
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
