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

bool float_params_only(const ir::Module& m) {
  for (const ir::Expr& p : m.main().params)
    if (!ir::is_tensor(p->type) || !is_float(ir::dtype_of(p))) return false;
  return true;
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

// Times and checks one region; t->offloaded says where it goes. A region that cannot be measured
// (inputs of other types than float, or a reference or native side that fails) keeps the rules'
// decision, with why; a backend that fails to build or run it, or gives other values, loses it.
void measure_region(const backends::Backend& backend, const backends::ExternFunction& f, const PlacementOptions& opts,
                    RegionTiming* t) {
  const std::string& name = t->backend;
  ir::Module plain = region_module(f.symbol, f.function);
  if (!float_params_only(plain)) {
    t->why = "not measured (inputs that are not float: random values may not be valid ones); kept on " + name;
    return;
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < plain.main().params.size(); ++i) {
    const ir::Expr& p = plain.main().params[i];
    inputs.push_back(api::random_tensor(ir::shape_of(p), ir::dtype_of(p), 1000 + i));
  }
  std::vector<Tensor> want;
  native::Compiled nc;
  try {
    Result<std::vector<Tensor>> r = reference::run_module(plain, inputs);
    if (!r.is_ok()) throw Error("the reference executor: " + r.status().message());
    want = std::move(r.value());
    nc = native::compile_native(plain, opts.native);
    t->native_error = relative_error(nc.executable->run(inputs, opts.threads, nullptr), want);
  } catch (const std::exception& e) {
    t->why = std::string("not measured (") + e.what() + "); kept on " + name;
    return;
  }
  auto run_native = [&] { return nc.executable->run(inputs, opts.threads, nullptr); };
  std::unique_ptr<backends::RuntimeModule> mod;
  try {
    mod = backend.compile({f}, opts.native.target.value_or(target::host()));
    t->backend_error = relative_error(mod->run(f.symbol, inputs), want);
  } catch (const std::exception& e) {
    t->offloaded = false;
    t->why = "measured: " + name + " failed on it alone (" + e.what() + ")";
    return;
  }
  if (t->backend_error > opts.tolerance) {
    char b[64];
    std::snprintf(b, sizeof b, "%.3g", t->backend_error);
    t->offloaded = false;
    t->why = "measured: " + name + "'s results differ from the reference (relative error " + b + ")";
    return;
  }
  auto run_backend = [&] { return mod->run(f.symbol, inputs); };
  // Alternate the two so that a change of the machine's speed affects both alike. Both run with
  // the thread count the model will use (a backend that keeps state per thread count, as oneDNN's
  // plans, builds it in the warm-up).
  std::optional<double> injected_b = opts.cost ? opts.cost(f.symbol, name) : std::nullopt;
  std::optional<double> injected_n = opts.cost ? opts.cost(f.symbol, "native") : std::nullopt;
  auto time_one = [](const std::function<std::vector<Tensor>()>& run) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> tb, tn;
  try {
    for (int i = 0; i < opts.warmup + opts.repeat; ++i) {
      if (!injected_b) {
        double v = time_one(run_backend);
        if (i >= opts.warmup) tb.push_back(v);
      }
      if (!injected_n) {
        double v = time_one(run_native);
        if (i >= opts.warmup) tn.push_back(v);
      }
    }
  } catch (const std::exception& e) {
    t->offloaded = false;
    t->why = "measured: " + name + " or native failed while timed (" + e.what() + ")";
    return;
  }
  t->backend_ms = injected_b ? *injected_b : median_ms(tb);
  t->native_ms = injected_n ? *injected_n : median_ms(tn);
  const std::string times = name + " " + ms(t->backend_ms) + ", native " + ms(t->native_ms);
  t->offloaded = t->backend_ms < t->native_ms;
  t->why = "measured: " + times + (t->offloaded ? "" : " (native not slower)");
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
      t.offloaded = true;  // the rules' decision, unless measured otherwise
      measure_region(*backend, f, opts, &t);
      if (!t.offloaded) dissolve.insert(f.symbol);
      all.push_back(t);
    }
  }
  if (report)
    for (size_t i = 0; i < report->regions.size(); ++i) {
      partition::RegionReport& r = report->regions[i];
      for (const RegionTiming& t : all) {
        if (r.symbol != t.symbol || r.symbol.empty()) continue;
        r.measured = t.why;
        if (t.offloaded) continue;
        r.offloaded = false;
        r.why_not = t.why;
        r.symbol.clear();
        // Its nodes run natively now: their decisions say so, with the measurement.
        for (partition::NodeDecision& d : report->decisions)
          if (d.region == static_cast<int>(i)) {
            d.rejections.insert(d.rejections.begin(), {d.backend, "region not offloaded: " + t.why});
            d.backend.clear();
            d.why.clear();
            d.region = -1;
          }
      }
    }
  if (timings) *timings = std::move(all);
  return partition::inline_regions(partitioned, dissolve);
}

}  // namespace sy::runtime
