// Op strategy: for the anchor op of a fused group and a target, the implementations that apply
// (topi's native ones and any registered from a library's folder), in one documented total
// order, and the choice among them: a measured record when the caller has one, else that order.
//
// The order (what "priority" means everywhere, including --explain): higher priority first; on
// equal priority the smaller name first (names are unique per op). Never "undefined".
//
// A choice is handed to lowering as the attributes Implementation and Knobs of the kernel's
// function (compile_native sets them on the planned function it lowers; the fused module, and so
// the artifact, keeps the plain function: an artifact holds the built kernels).

#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ops/op.h"
#include "target/target.h"
#include "topi/topi.h"

namespace sy::strategy {

// Bump when an implementation, a schedule or a knob changes what a record's (implementation,
// knobs) builds: tuning records carry it among their validators, and records of another version
// are refused.
inline constexpr const char* kScheduleVersion = "4";  // 2: oneDNN conv externs take post-ops; 3: NHWC 1x1 convs threaded over rows first; 4: kept NHWC convs whose window crowds L1 sets sum channel blocks

inline constexpr const char* kImplementationAttr = "Implementation";
inline constexpr const char* kKnobsAttr = "Knobs";

// The op call whose implementation (and schedule) a fused group uses: the strongest op kind
// (opaque > conv/dense/pool-like > reduce > injective > broadcast > elementwise), the last such
// op if several; null for a function without op calls.
const ir::CallNode* anchor_of(const ir::FunctionNode& fn);

// Adds an implementation of op beside topi's (e.g. a library's extern call, or a test's). Its
// name must be new for the op; call before the first compile (registration is not thread-safe).
void register_implementation(ops::OpCode op, topi::OpImpl impl);

// The library of op's implementation `name` (topi::OpImpl::library; "" for native code or an
// unknown name).
std::string library_of(ops::OpCode op, const std::string& name);

// The implementation of op named `name`, whether or not it applies to a call; null if none.
const topi::OpImpl* implementation_named(ops::OpCode op, const std::string& name);

// Every implementation of op: topi's, then the registered ones, in registration order.
std::vector<const topi::OpImpl*> implementations(ops::OpCode op);

struct Applicable {
  struct Entry {
    const topi::OpImpl* impl = nullptr;
    int priority = 0;
  };
  std::vector<Entry> entries;  // in the total order: the first is the default choice
  std::vector<std::pair<std::string, std::string>> rejected;  // name -> why it does not apply
};
Applicable applicable(const ir::CallNode& anchor, const target::Target& t);

// The implementation named `name` if it applies to the call; sy::Error saying why not otherwise.
const topi::OpImpl& require(const ir::CallNode& anchor, const target::Target& t, const std::string& name);

// What was chosen for a fused function, and why (for --explain and the compile summary).
struct Choice {
  std::string implementation;
  std::string knobs;           // "name=value ..." ("" = every knob at its default)
  std::string why;             // e.g. "record: 0.412 ms" or "priority 30 (no record)"
  bool from_record = false;
  // Per candidate implementation, what its records say (its best over its knobs: "0.412 ms",
  // or how it failed: "cut short: 2.3 ms", "wrong: ..."), when records chose.
  std::vector<std::pair<std::string, std::string>> measured;
  // Per implementation that has an ok record, its best (fastest knobs), as measured alone, and
  // with its layouts kept between its calls (kept_ms; 0: not measured): what
  // native/kept_layouts.h weighs when it chooses implementations with their neighbours.
  struct Cost {
    std::string implementation, knobs;
    double ms = 0, kept_ms = 0;
    bool chain = false;  // a model ran faster end to end with it keeping wherever it could
  };
  std::vector<Cost> costs;
  // The tuner: time this candidate with the function's KeptLayout attribute set to this.
  std::string kept_layout;
  // Taken without a record as part of a chain keeping its layout (native/kept_layouts.h).
  bool in_chain = false;
  // Lowered by a target hook (native/hooked_regions.h): no strategy, no record applies.
  bool by_hook = false;
};

// Chooses for one kernel: given its function as planned (weights in their packed types, what
// tune::workload_key hashes), its anchor call and the target; nullopt means "use the order".
using Chooser = std::function<std::optional<Choice>(const ir::FunctionNode& fn, const ir::CallNode& anchor,
                                                     const target::Target& t)>;

// The choice for fn: the chooser's if it gives one that applies, else the first in the order.
// nullopt when fn has no anchor op with an implementation (it will fall back).
std::optional<Choice> choose(const ir::FunctionNode& fn, const target::Target& t, const Chooser& chooser);

// "nn.conv2d(1x64x56x56 float32, 4x64x1x1x16 float32) -> 1x64x56x56 float32": the anchor's op
// and types.
std::string describe(const ir::CallNode& anchor);
// The anchor's description and the group's other ops: "nn.conv2d(...) -> ... + add, nn.relu".
std::string describe_group(const ir::FunctionNode& fn);

// fn with the choice's attributes (Implementation, Knobs) set.
ir::Expr with_choice(const ir::FunctionNode& fn, const Choice& c);

}  // namespace sy::strategy
