// A partitioned module together with its backends' runtime modules: what `run --backends` builds
// in process and what an artifact loads. Parts not offloaded run as natively compiled kernels
// (when `native` is set: the module is then in fused form) or on the reference executor.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/module.h"
#include "native/compile.h"
#include "native/executable.h"
#include "native/hooked_regions.h"
#include "support/tensor.h"
#include "target/target.h"

namespace sy::runtime {

struct CompiledModel {
  ir::Module module;  // partitioned: @main plus one function per offloaded region
  std::map<std::string, std::unique_ptr<backends::RuntimeModule>> modules;  // by backend name
  std::map<std::string, std::string> backend_of;                            // symbol -> backend
  std::shared_ptr<native::Executable> native;                               // the compiled path, if built
  target::Target target = target::reference();  // what the generated code (native, backends) is for
  // Regions a backend claimed but could not build, inlined back to run natively: one line each,
  // naming the region and the backend's reason (printed as warnings).
  std::vector<std::string> fallbacks;

  // Runs @main; throws sy::Error on bad inputs (shape, dtype, count) naming the input.
  // With `times` (native only), each call of the native plan is timed into it.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, int threads, native::CallTimes* times = nullptr) const;
};

// The target hooks of those backends that have one, by name (native::CompileOptions::lowering_hooks).
std::map<std::string, native::LoweringHookFn> lowering_hooks(const std::vector<const backends::Backend*>& backends);
// Their region splits (native::CompileOptions::region_splits).
std::map<std::string, native::RegionSplitFn> region_splits(const std::vector<const backends::Backend*>& backends);

// Compiles every external function of a partitioned module with its backend (looked up by the
// function's Compiler attribute among `available`); throws sy::Error if one is missing. A claim
// never turns into an error: a function its backend fails to build is inlined back into @main
// (so it runs natively) and noted in `fallbacks`. A backend with a lowering hook builds no module:
// its functions stay for native::compile_native to lower with the hook.
// `target` is what generated code is built for (recorded in the model and its artifact).
CompiledModel build_modules(const ir::Module& partitioned, const std::vector<const backends::Backend*>& available,
                            const target::Target& target);

// build_modules for `native.target` (the host if unset), then compile_native: a model ready to run,
// its module in fused form. Strict where build_modules forgives: a region its backend could not
// build, or a kernel left to the reference executor, is an sy::Error naming it. For timing a
// placement, where a quiet fallback would time something other than what was asked for.
CompiledModel build_runnable(const ir::Module& partitioned, const std::vector<const backends::Backend*>& available,
                             const native::CompileOptions& native);

}  // namespace sy::runtime
