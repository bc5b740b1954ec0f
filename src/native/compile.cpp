// The native compile pipeline.
#include "native/compile.h"

#include <chrono>
#include <cstdlib>
#include <random>

#include "codegen/c/build.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

#include <map>
#include "native/kept_layouts.h"
#include "native/lower_function.h"
#include "passes/fold_constants.h"
#include "strategy/externs.h"
#include "passes/fuse_ops.h"
#include "passes/simplify_arith.h"
#include "support/error.h"
#include "support/tensor_storage.h"
#include "target/host.h"
#include "topi/topi.h"

namespace sy::native {

namespace {
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// The packed weights live as long as the executable.
ir::Module prepack(const ir::Module& m, const target::Target& t) {
  LongLivedTensors weights;
  return topi::prepack_constants(m, t);
}

// $SWITCHYARD_CHOICES=random:SEED (testing): each kernel takes a random applicable implementation
// and random knob values, drawn per kernel from SEED and the kernel's structure, so that the
// differential and conformance suites check every configuration a tuning record may choose.
std::optional<uint64_t> random_choices_seed() {
  const char* e = std::getenv("SWITCHYARD_CHOICES");
  if (!e || !*e) return std::nullopt;
  const std::string s = e;
  char* end = nullptr;
  if (s.rfind("impls:", 0) == 0) return std::nullopt;  // listed_choices
  const unsigned long long v = s.rfind("random:", 0) == 0 ? std::strtoull(s.c_str() + 7, &end, 10) : 0;
  if (!end || end == s.c_str() + 7 || *end) throw Error("SWITCHYARD_CHOICES: expected random:SEED or impls:NAME,..., got '" + s + "'");
  return v;
}

// $SWITCHYARD_CHOICES=impls:NAME,NAME,... (benchmarks, e.g. one library's extern implementations
// against its other integrations): each kernel takes the first listed implementation that
// applies to it, with default knobs; others the strategy's order.
std::optional<std::vector<std::string>> listed_choices() {
  const char* e = std::getenv("SWITCHYARD_CHOICES");
  if (!e || std::string(e).rfind("impls:", 0) != 0) return std::nullopt;
  std::vector<std::string> names;
  std::string s = std::string(e).substr(6), name;
  for (char ch : s + ",")
    if (ch == ',') {
      if (!name.empty()) names.push_back(name);
      name.clear();
    } else {
      name += ch;
    }
  if (names.empty()) throw Error("SWITCHYARD_CHOICES: expected impls:NAME[,NAME...], got '" + std::string(e) + "'");
  return names;
}

strategy::Chooser listed_chooser(std::vector<std::string> names) {
  return [names](const ir::FunctionNode&, const ir::CallNode& anchor, const target::Target& t) -> std::optional<strategy::Choice> {
    strategy::Applicable a = strategy::applicable(anchor, t);
    for (const std::string& n : names)
      for (const strategy::Applicable::Entry& en : a.entries)
        if (en.impl->name == n) {
          strategy::Choice c;
          c.implementation = n;
          c.why = "listed (SWITCHYARD_CHOICES)";
          return c;
        }
    return std::nullopt;
  };
}

strategy::Chooser random_chooser(uint64_t seed) {
  return [seed](const ir::FunctionNode& fn, const ir::CallNode& anchor, const target::Target& t) -> std::optional<strategy::Choice> {
    std::mt19937_64 rng(seed ^ (ir::structural_hash(ir::function(fn.params, fn.body)) * 0x9e3779b97f4a7c15ull));
    strategy::Applicable a = strategy::applicable(anchor, t);
    if (a.entries.empty()) return std::nullopt;
    strategy::Choice c;
    c.implementation = a.entries[rng() % a.entries.size()].impl->name;
    c.from_record = true;
    c.why = "random (SWITCHYARD_CHOICES)";
    std::optional<std::string> knobs = random_knobs(*strategy::with_choice(fn, c)->as<ir::FunctionNode>(), t, rng);
    if (!knobs) return std::nullopt;  // the draw does not lower: the default, as without the hook
    c.knobs = *knobs;
    return c;
  };
}

}  // namespace

std::vector<const ir::CallNode*> primitive_calls(const ir::Module& m) {
  std::vector<const ir::CallNode*> out;
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && !c->is_op() && c->callee->as<ir::FunctionNode>()) out.push_back(c);
  return out;
}

Plan plan_for(const ir::Module& fused, const target::Target& t) { return plan_module(prepack(fused, t)); }

bool is_fused(const ir::Module& m) {
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op()) return false;
  return true;
}

ir::Module fuse_for_native(const ir::Module& m) {
  return is_fused(m) ? m : passes::fuse_ops(passes::simplify_arith(passes::fold_constants(m)));
}

namespace {

// A kernel whose choice a stateful extern's init refused (at the executable's making): its
// planned function, and why.
struct Refused {
  ir::Expr fn;
  std::string why;
};
struct RefusedKernel {
  Refused refused;
};
// A kernel that takes or gives a kept layout did not lower with the implementation that keeps
// it: its neighbours expect that layout, so the compile starts over with plain layouts.
struct KeptLayoutFailed {
  std::string why;
};

Compiled compile_once(const ir::Module& m, const CompileOptions& opts, const std::vector<Refused>& refused,
                      bool keep) {
  auto say = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  Compiled out;
  auto t0 = std::chrono::steady_clock::now();
  const target::Target tgt = opts.target ? *opts.target : target::host();
  out.fused = take_hooked_regions(fuse_for_native(m), opts.lowering_hooks, opts.region_splits, &tgt);
  Plan plan;
  std::vector<tir::PrimFunc> funcs;
  if (tgt.kind != target::Kind::Cpu) throw Error("native kernels need a cpu target, not '" + tgt.str() + "'");
  LowerFunctionOptions lo;
  lo.target = &tgt;
  strategy::Chooser chooser = opts.chooser;
  if (!chooser) {
    if (std::optional<uint64_t> seed = random_choices_seed()) chooser = random_chooser(*seed);
    if (std::optional<std::vector<std::string>> names = listed_choices()) chooser = listed_chooser(*names);
  }
  if (!refused.empty())
    chooser = [inner = chooser, &refused](const ir::FunctionNode& fn, const ir::CallNode& anchor,
                                          const target::Target& t) -> std::optional<strategy::Choice> {
      const ir::Expr f = without_kept_layout(fn);
      for (const Refused& r : refused)
        if (ir::structural_equal(f, r.fn)) {
          std::optional<strategy::Choice> d = strategy::choose(fn, t, nullptr);
          if (d) d->why += " (the chosen extern failed: " + r.why + ")";
          return d;
        }
      return inner ? inner(fn, anchor, t) : std::nullopt;
    };
  if (keep) {
    out.fused = keep_layouts(out.fused, tgt, chooser, opts.keep_all_layouts);
    // What keep_layouts chose for a call with its neighbours stands.
    chooser = [inner = chooser](const ir::FunctionNode& fn, const ir::CallNode& anchor,
                                const target::Target& t) -> std::optional<strategy::Choice> {
      if (auto why = fn.attrs.find(kChosenWithLayoutsAttr); why != fn.attrs.end()) {
        strategy::Choice c;
        c.implementation = fn.attrs.at(strategy::kImplementationAttr);
        auto k = fn.attrs.find(strategy::kKnobsAttr);
        c.knobs = k == fn.attrs.end() ? "" : k->second;
        c.why = why->second;
        c.in_chain = fn.attrs.count(kChosenInChainAttr) > 0;
        c.from_record = !c.in_chain;
        return c;
      }
      return inner ? inner(fn, anchor, t) : std::nullopt;
    };
  }
  // Lower every distinct kernel; groups that fail are marked Fallback and the plan redone once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    ir::Module packed = prepack(out.fused, tgt);
    plan = plan_module(packed);
    funcs.clear();
    out.choices.assign(plan.kernels.size(), strategy::Choice{});
    std::map<size_t, std::string> failed;  // kernel index -> reason
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      const auto* fn = plan.kernels[k]->as<ir::FunctionNode>();
      if (fn->attrs.count(kFallbackAttr)) continue;
      say("lowering kernel " + std::to_string(k + 1) + "/" + std::to_string(plan.kernels.size()) + " (" +
          plan.kernel_names[k] + ")");
      if (auto by = fn->attrs.find(kLoweredByAttr); by != fn->attrs.end()) {
        // A region a target hook lowers: the hook's kernel, no strategy.
        try {
          auto hook = opts.lowering_hooks.find(by->second);
          if (hook == opts.lowering_hooks.end())
            throw Error("kernel " + plan.kernel_names[k] + " is a region of " + by->second +
                        ", whose lowering hook this compile does not have (add it to the backends)");
          funcs.push_back(hook->second(*fn, plan.kernel_names[k], tgt));
          out.choices[k].implementation = by->second;
          out.choices[k].why = "lowered by the " + by->second + " target hook";
          out.choices[k].by_hook = true;
        } catch (const Error& e) {
          failed[k] = by->second + " lowering hook: " + e.what();
        }
        continue;
      }
      auto lower_with = [&](const std::optional<strategy::Choice>& c) {
        ir::Expr chosen = c ? strategy::with_choice(*fn, *c) : plan.kernels[k];
        te::Knobs knobs;
        LowerFunctionOptions klo = lo;
        klo.knobs = &knobs;
        funcs.push_back(lower_function(*chosen->as<ir::FunctionNode>(), plan.kernel_names[k], klo));
        if (c) {
          out.choices[k] = *c;
          out.choices[k].knobs = knobs.to_string();  // every knob's value, defaults included
          if (auto kept = fn->attrs.find(topi::kKeptLayoutAttr); kept != fn->attrs.end())
            out.choices[k].why += "; layout kept with its neighbours: " + kept->second;
        }
      };
      try {
        std::optional<strategy::Choice> c = strategy::choose(*fn, tgt, chooser);
        try {
          lower_with(c);
        } catch (const std::exception& e) {  // sy::Error, or an internal check the knobs trip
          if (fn->attrs.count(topi::kKeptLayoutAttr))
            throw KeptLayoutFailed{plan.kernel_names[k] + ": " + e.what()};
          if (!c || !c->from_record) throw;
          // A record that no longer lowers (e.g. a knob the schedule lost): the default, said.
          std::optional<strategy::Choice> d = strategy::choose(*fn, tgt, nullptr);
          d->why += " (the record's " + c->implementation + " failed: " + e.what() + ")";
          lower_with(d);
        }
      } catch (const Error& e) {
        failed[k] = e.what();
      }
    }
    if (failed.empty()) break;
    for (const auto& [k, reason] : failed)
      if (plan.kernels[k]->as<ir::FunctionNode>()->attrs.count(topi::kKeptLayoutAttr))
        throw KeptLayoutFailed{plan.kernel_names[k] + ": " + reason};
    SY_CHECK(attempt == 0) << "lowering failed after marking fallbacks";
    std::vector<const ir::CallNode*> packed_calls = primitive_calls(packed), fused_calls = primitive_calls(out.fused);
    SY_CHECK(packed_calls.size() == fused_calls.size()) << "prepacking changed the calls";
    std::unordered_map<const ir::ExprNode*, ir::FuncAttrs> why;
    for (size_t i = 0; i < packed_calls.size(); ++i) {
      const ir::Expr& callee = packed_calls[i]->callee;
      for (const auto& [k, reason] : failed)
        if (ir::structural_equal(callee, plan.kernels[k])) why[fused_calls[i]][kFallbackAttr] = reason;
    }
    for (const auto& [k, reason] : failed) out.fallbacks.emplace_back(plan.kernel_names[k], reason);
    out.fused = with_call_attrs(out.fused, std::move(why));
  }
  out.lower_seconds = since(t0);
  auto t1 = std::chrono::steady_clock::now();
  say("compiling " + std::to_string(funcs.size()) + " kernels with " +
      (tgt.codegen == "c" ? std::string("the C compiler") : "the " + tgt.codegen + " code generator"));
  codegen::BuildOptions bo;
  bo.externs = strategy::extern_symbols();
  bo.compile.target_flags = tgt.compiler_flags();
  bo.target = tgt;
  std::shared_ptr<codegen::Module> lib = funcs.empty() ? nullptr : codegen::build(funcs, bo);
  out.compile_seconds = since(t1);
  out.generated_c = lib ? lib->generated_c() : "";
  try {
    out.executable = std::make_shared<Executable>(plan, std::move(lib), tgt);
  } catch (const ExternInitError& e) {
    for (size_t k = 0; k < plan.kernel_names.size(); ++k)
      if (plan.kernel_names[k] == e.kernel)
        throw RefusedKernel{{without_kept_layout(*plan.kernels[k]->as<ir::FunctionNode>()), e.what()}};
    throw;
  }
  return out;
}

}  // namespace

Compiled compile_native(const ir::Module& m, const CompileOptions& opts) {
  // A chosen extern that refuses its call site (e.g. a shape its library has no primitive for)
  // is replaced by the default, said in the kernel's choice, as a record that does not lower is.
  std::vector<Refused> refused;
  bool keep = true;
  for (;;) {
    try {
      return compile_once(m, opts, refused, keep);
    } catch (const KeptLayoutFailed& f) {
      if (!keep) throw Error(f.why);
      keep = false;
      if (opts.progress) opts.progress("kept layouts dropped (" + f.why + "); compiling again with plain layouts");
    } catch (const RefusedKernel& r) {
      for (const Refused& x : refused)
        if (ir::structural_equal(x.fn, r.refused.fn)) throw Error(r.refused.why);  // the default refused too
      refused.push_back(r.refused);
    }
  }
}

std::shared_ptr<Executable> load_native(const ir::Module& fused, const std::string& library_bytes,
                                        const target::Target& target) {
  if (!is_fused(fused)) throw Error("the artifact's graph is not in fused form");
  if (target.kind != target::Kind::Cpu) throw Error("the artifact's native kernels have no cpu target");
  Plan plan = plan_for(fused, target);
  std::shared_ptr<codegen::Module> lib =
      library_bytes.empty() ? nullptr : codegen::Module::load_from_bytes(library_bytes, strategy::extern_symbols());
  for (const Call& c : plan.calls)
    if (!c.external && !c.fallback && (!lib || !lib->has_kernel(c.kernel)))
      throw Error("the artifact's native library has no kernel " + c.kernel);
  return std::make_shared<Executable>(std::move(plan), std::move(lib), target);
}

}  // namespace sy::native

