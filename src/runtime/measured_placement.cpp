// Measured placement: each claimed region timed on its backend and natively, checked against the
// reference executor.
#include "runtime/measured_placement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>

#include "api/inputs.h"
#include "backends/reference/executor.h"
#include "partition/inline_regions.h"
#include "partition/partition_graph.h"
#include "target/host.h"
#include "support/error.h"

namespace sy::runtime {

namespace {

// max |a - b| / max |b| over every output (inf on a shape or dtype mismatch, NaN where one side
// has one and the other not).
double relative_error(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) return INFINITY;
  double err = 0, scale = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].shape() != want[k].shape() || got[k].dtype() != want[k].dtype()) return INFINITY;
    for (int64_t i = 0; i < got[k].numel(); ++i) {
      const double a = got[k].get_as_double(i), b = want[k].get_as_double(i);
      if (std::isnan(a) != std::isnan(b)) return INFINITY;
      if (std::isnan(a)) continue;
      err = std::max(err, std::abs(a - b));
      scale = std::max(scale, std::abs(b));
    }
  }
  return scale > 0 ? err / scale : err;
}

double median_ms(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[t.size() / 2];
}

std::string ms(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", v);
  return b;
}

// A module whose @main calls the region, and the same with the region inlined (composites
// flattened into plain ops): what the native path and the reference executor run.
ir::Module region_module(const std::string& symbol, const ir::Expr& fn) {
  const auto* f = fn->as<ir::FunctionNode>();
  ir::Module r;
  r.functions[symbol] = fn;
  std::vector<ir::Expr> params, args;
  for (const ir::Expr& p : f->params) {
    params.push_back(ir::var(p->as<ir::VarNode>()->name, p->type));
    args.push_back(params.back());
  }
  r.functions["main"] = ir::function(params, ir::call_function(ir::global_var(symbol, fn->type), args));
  return partition::inline_regions(r, {symbol});
}

}  // namespace

ir::Module place_by_measurement(const ir::Module& partitioned, const std::vector<const backends::Backend*>& available,
                                const PlacementOptions& opts, partition::PartitionReport* report,
                                std::vector<RegionTiming>* timings) {
  std::set<std::string> dissolve;
  std::vector<RegionTiming> all;
  size_t total = 0, done = 0;
  const auto regions = partition::extern_functions(partitioned);
  for (const auto& [backend, fns] : regions) total += fns.size();
  for (const auto& [backend_name, fns] : regions) {
    const backends::Backend* backend = nullptr;
    for (const backends::Backend* b : available)
      if (b->name() == backend_name) backend = b;
    if (!backend) throw Error("the model needs backend '" + backend_name + "', which is not available in this build");
    for (const backends::ExternFunction& f : fns) {
      ++done;
      if (opts.progress)
        opts.progress("placing: region " + std::to_string(done) + "/" + std::to_string(total) + " (@" + f.symbol +
                      " on " + backend_name + " or native)");
      RegionTiming t;
      t.symbol = f.symbol;
      t.backend = backend_name;
      ir::Module plain = region_module(f.symbol, f.function);
      std::vector<Tensor> inputs;
      for (size_t i = 0; i < plain.main().params.size(); ++i) {
        const ir::Expr& p = plain.main().params[i];
        inputs.push_back(api::random_tensor(ir::shape_of(p), ir::dtype_of(p), 1000 + i));
      }
      Result<std::vector<Tensor>> want = reference::run_module(plain, inputs);
      if (!want.is_ok()) throw Error("placing @" + f.symbol + ": the reference executor failed: " + want.status().message());

      // The candidates, built once. A backend that cannot build the region alone loses it.
      std::unique_ptr<backends::RuntimeModule> mod;
      std::string build_error;
      try {
        mod = backend->compile({f}, opts.native.target.value_or(target::host()));
      } catch (const std::exception& e) {
        build_error = e.what();
      }
      native::Compiled nc = native::compile_native(plain, opts.native);
      auto run_backend = [&] { return mod->run(f.symbol, inputs); };
      auto run_native = [&] { return nc.executable->run(inputs, opts.threads, nullptr); };
      t.native_error = relative_error(run_native(), want.value());
      if (mod) t.backend_error = relative_error(run_backend(), want.value());

      // Alternate the two so that a change of the machine's speed affects both alike.
      std::vector<double> tb, tn;
      auto time_one = [](const std::function<std::vector<Tensor>()>& run) {
        auto t0 = std::chrono::steady_clock::now();
        run();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      };
      std::optional<double> injected_b = opts.cost ? opts.cost(f.symbol, backend_name) : std::nullopt;
      std::optional<double> injected_n = opts.cost ? opts.cost(f.symbol, "native") : std::nullopt;
      for (int i = 0; i < opts.warmup + opts.repeat; ++i) {
        if (mod && !injected_b) {
          double v = time_one(run_backend);
          if (i >= opts.warmup) tb.push_back(v);
        }
        if (!injected_n) {
          double v = time_one(run_native);
          if (i >= opts.warmup) tn.push_back(v);
        }
      }
      t.backend_ms = injected_b ? *injected_b : median_ms(tb);
      t.native_ms = injected_n ? *injected_n : median_ms(tn);

      const bool backend_ok = mod && t.backend_error <= opts.tolerance;
      const std::string times = backend_name + " " + (mod ? ms(t.backend_ms) : "-") + ", native " + ms(t.native_ms);
      if (!mod) {
        t.why = "measured: " + backend_name + " cannot build it alone (" + build_error + ")";
      } else if (!backend_ok) {
        char b[64];
        std::snprintf(b, sizeof b, "%.3g", t.backend_error);
        t.why = "measured: " + backend_name + "'s results differ from the reference (relative error " + b + ")";
      } else if (t.backend_ms < t.native_ms) {
        t.offloaded = true;
        t.why = "measured: " + times;
      } else {
        t.why = "measured: " + times + " (native not slower)";
      }
      if (!t.offloaded) dissolve.insert(f.symbol);
      all.push_back(t);
    }
  }
  if (report)
    for (partition::RegionReport& r : report->regions)
      for (const RegionTiming& t : all)
        if (r.symbol == t.symbol) {
          r.measured = t.why;
          if (!t.offloaded) {
            r.offloaded = false;
            r.why_not = t.why;
          }
        }
  if (timings) *timings = std::move(all);
  return partition::inline_regions(partitioned, dissolve);
}

}  // namespace sy::runtime
