// Regions that a target hook lowers join the native kernels: each call of such a region becomes
// the call of a primitive function (LoweredBy=<backend>), its weights lifted to parameters, so the
// planner gives it buffers in the native arena and compile_native lowers it with the hook.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "ir/module.h"
#include "target/target.h"
#include "tir/stmt.h"

namespace sy::native {

// The attribute naming the backend whose lowering hook made a kernel (kept in the fused module,
// so an artifact's plan knows the kernel is in its library).
inline constexpr const char* kLoweredByAttr = "LoweredBy";

// A backend's lowering hook (backends::LoweringHook::lower).
using LoweringHookFn = std::function<tir::PrimFunc(const ir::FunctionNode& fn, const std::string& name,
                                                   const target::Target& target)>;
// A backend's region split (backends::LoweringHook::split).
using RegionSplitFn = std::function<std::optional<ir::Expr>(const ir::FunctionNode& region, const target::Target& target)>;

// m with every call of a module function whose Compiler attribute names a key of `hooks` replaced
// by a call of that function inlined as a primitive function: Primitive=1, LoweredBy=<backend>,
// Compiler and Composite structure kept inside, each constant the region's body reads (its
// weights) a parameter that the call passes. The region functions that became kernels leave the
// module. Other external functions are untouched. A region whose backend has a split in `splits`
// (made for `target`) becomes instead the calls of its pieces, each such a primitive function.
ir::Module take_hooked_regions(const ir::Module& m, const std::map<std::string, LoweringHookFn>& hooks,
                               const std::map<std::string, RegionSplitFn>& splits = {},
                               const target::Target* target = nullptr);

}  // namespace sy::native
