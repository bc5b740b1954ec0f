// Layouts kept between kernels. An extern implementation runs its library in the library's own
// layout (oneDNN's nChw16c) and, at the plain layout of the native kernels around it, reorders
// its input in and its result out inside every call. Where a value's producer and every one of
// its consumers are implementations that can pass it in the same layout (topi::OpImpl::
// kept_layouts), the value stays in that layout between them and neither call reorders it: a
// chain of oneDNN convolutions chosen one by one runs as the library's region would.
#pragma once
#include <string>
#include <unordered_map>

#include "ir/expr.h"
#include "ir/module.h"
#include "strategy/strategy.h"
#include "target/target.h"

namespace sy::native {

// `fused` (a main that calls fused functions) with topi::kKeptLayoutAttr set on every call that
// takes or gives a value kept in a layout. A call's implementation is what `chooser` gives for
// its function as planned for t (weights packed), else the strategy's order: the choice lowering
// then makes. Values of the model's result, or read by anything but such a call, stay plain.
//
// Where the chooser's choice carries the records' costs (strategy::Choice::costs) of both a
// plain implementation and one that keeps layouts, timed alone and kept, the calls choose between
// the two together (a keeping call saves its reorders only beside keeping neighbours), and the
// chosen implementation is set on the call's function (kImplementationAttr, kKnobsAttr, and
// kChosenWithLayoutsAttr saying why), which compile_native then lowers.
// The records' cost of a keeping option marked `chain` (a model ran faster with it everywhere,
// end to end: tune's check), or `keep_all`, make those calls keep without weighing.
//
// Where no record chose for a call, an implementation with a chain role (topi::ChainRole) is
// taken along chains of calls that can all keep its layout (native NHWC along MobileNet's
// depthwise and 1x1 convs, and between the 3x3 convs of few channels of a detector's backbone),
// and only where it then keeps its data or its result. Where no record chose either, the
// defaults' conv2d.blocked calls keep channel blocks (nChw<B>c) between them (ResNet's 14x14 and
// 7x7 stages); a call whose records chose conv2d.blocked keeps none (see support_of).
ir::Module keep_layouts(const ir::Module& fused, const target::Target& t, const strategy::Chooser& chooser,
                        bool keep_all = false);

// Set with an implementation this pass chose for a call: why.
inline constexpr const char* kChosenWithLayoutsAttr = "ChosenWithLayouts";
// Set beside it where no record chose: the implementation joined a chain of calls keeping its
// layout (topi::ChainRole).
inline constexpr const char* kChosenInChainAttr = "ChosenInChain";

// `fused` with the given attributes added to the functions of the given calls of its main.
ir::Module with_call_attrs(const ir::Module& fused, std::unordered_map<const ir::ExprNode*, ir::FuncAttrs> attrs);

// fn's function without what keep_layouts set: what the kernel is when nothing is kept.
ir::Expr without_kept_layout(const ir::FunctionNode& fn);

}  // namespace sy::native
