// Timing one region for measured placement: built on its backend and natively, checked against
// the reference executor, timed alternately.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/module.h"
#include "native/compile.h"
#include "runtime/measured_placement.h"
#include "support/tensor.h"

namespace sy::runtime {

// The largest over the outputs of max |a - b| / max |b| (each output on its own scale, so that a
// small output is not judged on a large one's); inf on a shape or dtype mismatch, or where NaN or
// an infinity in one is not the same in the other.
double relative_error(const std::vector<Tensor>& got, const std::vector<Tensor>& want);

// The region inlined into a module's @main (composites flattened into plain ops): what the native
// path and the reference executor run.
ir::Module region_module(const std::string& symbol, const ir::Expr& fn);

// Medians of runs timed alternately (in turns of a few runs each), so that a change of the
// machine's speed affects all alike.
// A run whose cost is injected (tests) is not timed. Throws what a run throws.
std::vector<double> time_alternately(const std::vector<std::function<void()>>& runs,
                                     const std::vector<std::optional<double>>& injected, const PlacementOptions& opts);

// One region built on its backend and natively, on seeded random inputs of its real types.
struct MeasuredRegion {
  ir::Module plain;  // the region alone, composites flattened
  std::vector<Tensor> inputs, want;  // want: the reference executor's outputs (when checked)
  native::Compiled nc;
  std::unique_ptr<backends::RuntimeModule> mod;
  std::string symbol;
  double backend_ms = 0, native_ms = 0, backend_error = 0, native_error = 0;
  bool timed = false;         // both sides were timed
  bool backend_lost = false;  // the backend failed or gave other values: native takes it
  std::string why;            // when not timed

  void run_native(int threads) const { nc.executable->run(inputs, threads, nullptr); }
  void run_backend() const { mod->run(symbol, inputs); }
};

// Builds, checks (with `check`, against the reference executor) and times one region (`label`
// names it to opts.cost). A region that cannot be measured (inputs that are not float, or a
// reference or native side that fails) is not timed, with why; a backend that fails to build or
// run it, or gives other values, loses.
std::unique_ptr<MeasuredRegion> measure(const backends::Backend& backend, const backends::ExternFunction& f,
                              const std::string& label, const PlacementOptions& opts, bool check);

}  // namespace sy::runtime
