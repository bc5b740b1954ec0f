// Timing one region for measured placement.
#include "runtime/region_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "backends/reference/executor.h"
#include "partition/inline_regions.h"
#include "runtime/compiled_model.h"
#include "support/error.h"
#include "support/random_tensor.h"
#include "target/host.h"

namespace sy::runtime {

namespace {

bool float_params_only(const ir::Module& m) {
  for (const ir::Expr& p : m.main().params)
    if (!ir::is_tensor(p->type) || !is_float(ir::dtype_of(p))) return false;
  return true;
}

double median_ms(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[t.size() / 2];
}

// A module whose @main calls the region `symbol` with its own parameters.
ir::Module calling_module(const std::string& symbol, const ir::Expr& fn) {
  const auto* f = fn->as<ir::FunctionNode>();
  ir::Module r;
  r.functions[symbol] = fn;
  std::vector<ir::Expr> params, args;
  for (const ir::Expr& p : f->params) {
    params.push_back(ir::var(p->as<ir::VarNode>()->name, p->type));
    args.push_back(params.back());
  }
  r.functions["main"] = ir::function(params, ir::call_function(ir::global_var(symbol, fn->type), args));
  return r;
}

// A backend with a lowering hook builds no runtime module: its side of the region is the region
// lowered by the hook into a native kernel, run as one (what compile_native makes of it in the
// model, planned buffers included).
class HookedRegion : public backends::RuntimeModule {
 public:
  HookedRegion(std::shared_ptr<native::Executable> exe, int threads) : exe_(std::move(exe)), threads_(threads) {}
  std::vector<Tensor> run(const std::string&, const std::vector<Tensor>& inputs) override {
    return exe_->run(inputs, threads_, nullptr);
  }
  std::string save() const override { return ""; }

 private:
  std::shared_ptr<native::Executable> exe_;
  int threads_;
};

std::unique_ptr<backends::RuntimeModule> build_region(const backends::Backend& backend, const backends::ExternFunction& f,
                                                      const PlacementOptions& opts) {
  if (!backend.lowering_hook()) return backend.compile({f}, opts.native.target.value_or(target::host()));
  native::CompileOptions no = opts.native;
  no.lowering_hooks = lowering_hooks({&backend});
  no.region_splits = region_splits({&backend});
  native::Compiled nc = native::compile_native(calling_module(f.symbol, f.function), no);
  if (!nc.fallbacks.empty()) throw Error(nc.fallbacks[0].second);
  return std::make_unique<HookedRegion>(nc.executable, opts.threads);
}

}  // namespace

// The largest over the outputs of max |a - b| / max |b| (each output on its own scale, so that a
// small output is not judged on a large one's); inf on a shape or dtype mismatch, or where NaN or
// an infinity in one is not the same in the other.
double relative_error(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].shape() != want[k].shape() || got[k].dtype() != want[k].dtype()) return INFINITY;
    double err = 0, scale = 0;
    for (int64_t i = 0; i < got[k].numel(); ++i) {
      const double a = got[k].get_as_double(i), b = want[k].get_as_double(i);
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
        if (!(std::isnan(a) && std::isnan(b)) && a != b) return INFINITY;
        continue;
      }
      err = std::max(err, std::abs(a - b));
      scale = std::max(scale, std::abs(b));
    }
    worst = std::max(worst, scale > 0 ? err / scale : err);
  }
  return worst;
}

// The region inlined into @main (composites flattened into plain ops): what the native path and
// the reference executor run.
ir::Module region_module(const std::string& symbol, const ir::Expr& fn) {
  return partition::inline_regions(calling_module(symbol, fn), {symbol});
}

// Medians of runs timed alternately, so that a change of the machine's speed affects all alike:
// in turns of a few runs each, the first of a turn untimed. A model deployed runs back to back,
// its own weights and activations in the caches from the run before; timed one run each in turn,
// every run found the other candidate's data there instead. (EfficientNet-B0 on a Xeon with 2 MB
// of L2 a core: oneDNN alone 6.43 ms and native 6.11 one run each in turn, 4.90 and 5.52 run back
// to back, each in a process of its own: the alternation chose the slower one.)
// A run whose cost is injected (tests) is not timed. Throws what a run throws.
std::vector<double> time_alternately(const std::vector<std::function<void()>>& runs,
                                     const std::vector<std::optional<double>>& injected, const PlacementOptions& opts) {
  constexpr int kPerTurn = 3;
  std::vector<std::vector<double>> t(runs.size());
  for (size_t k = 0; k < runs.size(); ++k)
    for (int i = 0; i < opts.warmup && !injected[k]; ++i) runs[k]();
  const int turns = (opts.repeat + kPerTurn - 1) / kPerTurn;
  for (int turn = 0; turn < turns; ++turn)
    for (size_t k = 0; k < runs.size(); ++k) {
      if (injected[k]) continue;
      runs[k]();  // the caches back to this candidate's data
      for (int i = 0; i < kPerTurn; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        runs[k]();
        t[k].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    }
  std::vector<double> out;
  for (size_t k = 0; k < runs.size(); ++k) out.push_back(injected[k] ? *injected[k] : median_ms(t[k]));
  return out;
}

// Builds, checks (with `check`, against the reference executor) and times one region. A region
// that cannot be measured (inputs that are not float, or a reference or native side that fails)
// is not timed, with why; a backend that fails to build or run it, or gives other values, loses.
std::unique_ptr<MeasuredRegion> measure(const backends::Backend& backend, const backends::ExternFunction& f,
                              const std::string& label, const PlacementOptions& opts, bool check) {
  auto p = std::make_unique<MeasuredRegion>();
  p->symbol = f.symbol;
  const std::string& name = backend.name();
  p->plain = region_module(f.symbol, f.function);
  if (!float_params_only(p->plain)) {
    p->why = "not measured (inputs that are not float: random values may not be valid ones)";
    return p;
  }
  for (size_t i = 0; i < p->plain.main().params.size(); ++i) {
    const ir::Expr& q = p->plain.main().params[i];
    p->inputs.push_back(random_tensor(ir::shape_of(q), ir::dtype_of(q), 1000 + i));
  }
  try {
    if (check) {
      Result<std::vector<Tensor>> r = reference::run_module(p->plain, p->inputs);
      if (!r.is_ok()) throw Error("the reference executor: " + r.status().message());
      p->want = std::move(r.value());
    }
    p->nc = native::compile_native(p->plain, opts.native);
    if (check) p->native_error = relative_error(p->nc.executable->run(p->inputs, opts.threads, nullptr), p->want);
  } catch (const std::exception& e) {
    p->why = std::string("not measured (") + e.what() + ")";
    return p;
  }
  try {
    p->mod = build_region(backend, f, opts);
    std::vector<Tensor> got = p->mod->run(f.symbol, p->inputs);
    if (check) p->backend_error = relative_error(got, p->want);
  } catch (const std::exception& e) {
    p->backend_lost = true;
    p->why = "measured: " + name + " failed on it alone (" + e.what() + ")";
    return p;
  }
  if (p->backend_error > opts.tolerance) {
    char b[64];
    std::snprintf(b, sizeof b, "%.3g", p->backend_error);
    p->backend_lost = true;
    p->why = "measured: " + name + "'s results differ from the reference (relative error " + b + ")";
    return p;
  }
  // Both run with the thread count the model will use (a backend that keeps state per thread
  // count, as oneDNN's plans, builds it in the warm-up).
  try {
    const MeasuredRegion& q = *p;
    std::vector<double> m = time_alternately(
        {[&q] { q.run_backend(); }, [&q, &opts] { q.run_native(opts.threads); }},
        {opts.cost ? opts.cost(label, name) : std::nullopt, opts.cost ? opts.cost(label, "native") : std::nullopt},
        opts);
    p->backend_ms = m[0];
    p->native_ms = m[1];
  } catch (const std::exception& e) {
    p->backend_lost = true;
    p->why = "measured: " + name + " or native failed while timed (" + e.what() + ")";
    return p;
  }
  p->timed = true;
  return p;
}

}  // namespace sy::runtime
