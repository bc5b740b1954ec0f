// The native compiled path as one call: fuse, plan, lower every unique fused function to a
// kernel, generate C, compile (cached by content hash), load.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ir/module.h"
#include "native/executable.h"
#include "native/hooked_regions.h"
#include "strategy/strategy.h"
#include "target/target.h"

namespace sy::native {

struct CompileOptions {
  // The machine the kernels are for (its features become the C compiler's -march and -m flags;
  // its vector width and registers size the schedules). Unset: the host.
  std::optional<target::Target> target;
  // Progress messages ("lowering 12/57 kernels", "compiling C ..."), for long compiles.
  std::function<void(const std::string&)> progress;
  // Picks each kernel's implementation and knobs (e.g. from tuning records); it is given the
  // kernel's function as planned (weights in their packed types). Null, or nullopt from it: the
  // strategy's order.
  strategy::Chooser chooser;
  // Target hooks by backend name: the regions of these backends (external functions with
  // Compiler=<name>) are lowered by their hook into kernels of this library instead of being run
  // by a runtime module (see hooked_regions.h).
  std::map<std::string, LoweringHookFn> lowering_hooks;
  // The splits of those hooks that make several kernels of a region (hooked_regions.h).
  std::map<std::string, RegionSplitFn> region_splits;
  // Every kernel whose records measured an implementation that keeps layouts with its neighbours
  // takes it (see kept_layouts.h), instead of weighing it against the others: what `tune` times
  // the model with, against the kernels chosen one by one.
  bool keep_all_layouts = false;
};

struct Compiled {
  // @main calls fused primitive functions and external functions only. Weights are in their plain
  // layout here (what artifacts store); the executable's plan holds them prepacked
  // (topi::prepack_constants), redone identically at load.
  ir::Module fused;
  // Fused groups with no native implementation, run by the reference kernels: kernel -> reason.
  std::vector<std::pair<std::string, std::string>> fallbacks;
  std::shared_ptr<Executable> executable;
  // Per kernel of the executable's plan (same index): what was chosen and why; empty
  // implementation for a kernel that falls back.
  std::vector<strategy::Choice> choices;
  std::string generated_c;
  double lower_seconds = 0, compile_seconds = 0;
};

// m may be partitioned (calls of external functions are kept; their runtime modules are run by
// the caller). A fused group that cannot be lowered (an op without a native implementation or
// an attribute value it does not support) is marked Fallback and runs on the reference kernels.
Compiled compile_native(const ir::Module& m, const CompileOptions& opts = {});

// Rebuilds the executable of an artifact: the fused module, its library's bytes and the target
// they were compiled for (the weights are packed for it again); no compiler.
std::shared_ptr<Executable> load_native(const ir::Module& fused, const std::string& library_bytes,
                                        const target::Target& target);

// Whether a module is in fused form (what compile_native returns).
bool is_fused(const ir::Module& m);

// The primitive-function calls of @main in post-order. prepack_constants rewrites calls in place,
// so a fused module and its packed form list corresponding calls at the same positions.
std::vector<const ir::CallNode*> primitive_calls(const ir::Module& m);

// The plan of a fused module for a target, weights packed for it (what compile_native lowers and
// load_native rebuilds).
Plan plan_for(const ir::Module& fused, const target::Target& t);

// What compile_native lowers from: m itself if fused, else m with constants folded, arithmetic
// simplified and ops fused into primitive functions.
ir::Module fuse_for_native(const ir::Module& m);

}  // namespace sy::native
