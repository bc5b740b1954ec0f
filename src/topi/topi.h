// The operator library of the native path: for each graph op, a tensor-expression compute and a
// default x86 schedule for a fused group anchored on it. Lowering a fused primitive function
// (src/native/) builds its body op by op with `compute`, then calls the anchor's `schedule`.
//
// Semantics are those of the reference kernels (src/backends/reference/), i.e. ONNX's; the
// conformance suite checks every op through this path.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"
#include "ops/op.h"
#include "target/target.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace sy::topi {

// What a schedule function is given: the schedule of one fused group (every stage of the group,
// the group's inputs as placeholders), the group's outputs, and its anchor (the op whose
// schedule is used: the strongest op kind in the group, e.g. the conv2d of conv+bias+relu).
struct GroupSchedule {
  te::Schedule* sch = nullptr;
  std::vector<te::Tensor> outputs;         // the fused function's result(s)
  const ir::CallNode* anchor = nullptr;    // the anchor op call (inside the fused function)
  std::vector<te::Tensor> anchor_outputs;  // its output tensor(s) in this schedule
  te::Knobs* knobs = nullptr;              // tunable decisions; null: every knob at its default
  const target::Target* target = nullptr;  // the machine; every size below comes from it
  int vector_lanes = 0;                    // f32 lanes per vector
  int vector_registers = 0;                // architectural vector registers
  int threads = 0;                         // 0: as many as OpenMP gives
};

// What the native kernels derive from a target, in one place.
// The packed weight block (output channels of conv2d, columns of dense per panel): one vector.
int weight_block(const target::Target& t);

// An op's compute: its output tensor(s) (one per result; tuple-valued ops return several) from one
// input tensor per IR argument, for a target (most computes ignore it; conv2d and dense pack
// their weight in target-sized blocks). Accepts functions with or without the target argument.
class ComputeFn {
 public:
  using Fn = std::function<std::vector<te::Tensor>(const ir::CallNode&, const std::vector<te::Tensor>&,
                                                   const target::Target&)>;
  ComputeFn() = default;
  template <typename F>
  ComputeFn(F f) {  // NOLINT: implicit, so registrations read {compute, schedule}
    if constexpr (std::is_invocable_v<F&, const ir::CallNode&, const std::vector<te::Tensor>&, const target::Target&>)
      fn_ = std::move(f);
    else
      fn_ = [f = std::move(f)](const ir::CallNode& c, const std::vector<te::Tensor>& in, const target::Target&) {
        return f(c, in);
      };
  }
  std::vector<te::Tensor> operator()(const ir::CallNode& c, const std::vector<te::Tensor>& in,
                                     const target::Target& t) const {
    return fn_(c, in, t);
  }
  explicit operator bool() const { return static_cast<bool>(fn_); }

 private:
  Fn fn_;
};

// Extern C functions the generated code may call (extern stages, e.g. topk), by symbol. The
// native module is given this table when it is loaded, so artifacts need no compiler and no
// exported symbols from the program.
using ExternTable = std::map<std::string, void*>;

// Where an implementation can keep a layout of its own at a fused function's boundary (see
// OpImpl::kept_layouts).
struct KeptLayoutSupport {
  std::string layout;              // "": none
  std::vector<int> params;         // parameters it can take in the layout
  std::vector<int> with_result;    // parameters it can take in it only when the result is in it too
  std::vector<int> result_needs;   // parameters it must take in it to give the result in it
  bool result = false;             // whether it can give its result in the layout
  int in_place = -1;               // a parameter whose storage the kept result may take (-1: none)
};

// The attribute on a fused function some of whose parameters, or whose result, are kept in an
// implementation's layout (native/kept_layouts.h sets it): "<layout> in=<param>,... out".
inline constexpr const char* kKeptLayoutAttr = "KeptLayout";
struct KeptLayout {
  std::string layout;
  std::vector<int> params;  // parameters given in the layout
  bool result = false;      // the result is wanted in it
};
// fn's KeptLayout attribute; nullopt without one; sy::Error if malformed.
std::optional<KeptLayout> kept_layout_of(const ir::FunctionNode& fn);
std::string kept_layout_str(const KeptLayout& k);

// The layout native implementations keep (conv2d.nhwc): a 4-d NCHW value stored [N, H, W, C]. A
// fused function lowered with some of its parameters or its result kept in it reads each such
// parameter through nchw_view (the ops' computes stay NCHW; the view inlines into their reads)
// and writes its result through nhwc_store, the group's output stage then.
inline constexpr const char* kNhwcLayout = "nhwc";
inline constexpr const char* kNhwcStoreStage = "nhwc_store";
te::Tensor nchw_view(const te::Tensor& stored);
te::Tensor nhwc_store(const te::Tensor& logical);

// The channel-blocked layout conv2d.blocked keeps: a 4-d NCHW value stored [N, C/B, H, W, B], B
// its weight block (the target's vector lanes), named as oneDNN names it ("nChw16c"). Read
// through blocked_view (a stage the computes inline), written through blocked_store.
std::string blocked_layout(int64_t block);
int64_t blocked_layout_block(const std::string& layout);  // B of "nChw<B>c"; 0 for another layout
inline constexpr const char* kBlockedStoreStage = "nchwc_store";
te::Tensor blocked_view(const te::Tensor& stored);
te::Tensor blocked_store(const te::Tensor& logical, int64_t block);

// Where an implementation that keeps a layout is taken without records (native/kept_layouts.h):
// in chains of calls connected through values they can pass in the layout, where at least one
// call links (Links: the implementation pays off only with its data and its result kept, e.g. a
// depthwise conv in NHWC) and the others join (Joins: kept on at least one side). The layout is
// kept from call to call and a reorder paid only at a chain's ends. Pairs: the implementation is
// faster than the default ones already when it keeps one side (a dense KxK conv of few channels
// in NHWC); calls that pair form chains of their own, which nothing joins, and act as joining
// ones in a chain with a link.
enum class ChainRole { None, Joins, Links, Pairs };

// One native implementation of an op (a compute and the schedule of a group anchored on it).
// An op may have several (conv2d: flat, rows, blocked, depthwise, direct); which one a fused
// group uses is the strategy's choice (src/strategy/), which lists these beside extern ones.
struct OpImpl {
  // Unique per op, e.g. "conv2d.flat"; the op's name when it has one implementation. Records
  // and --explain name implementations by it.
  std::string name;
  // Throws sy::Error for attribute values it does not support.
  ComputeFn compute;
  // Schedules a group anchored on this op. Must leave every compute stage that is not an output
  // either inlined or placed (compute_at). Null: schedule_injective.
  std::function<void(GroupSchedule& g)> schedule;
  // "" when it computes this call, else why not (printed by --explain). Null: always.
  std::function<std::string(const ir::CallNode& call, const target::Target& t)> why_not;
  // Preference without a measured record (higher first; ties by name). Null: kDefaultPriority.
  std::function<int(const ir::CallNode& call, const target::Target& t)> priority;
  // An extern implementation's library and version (e.g. "oneDNN 2.6.3"); "" for native code.
  std::string library;
  // Computes the whole fused function (given its parameters' tensors) when it can, e.g. one
  // library call that applies the group's other ops as post-ops, so they make no pass of their
  // own over memory; nullopt (or null): op by op, this implementation's compute for the anchor.
  // When it computes the function, the schedule is given its outputs as the anchor's outputs.
  std::function<std::optional<std::vector<te::Tensor>>(const ir::FunctionNode& fn, const std::vector<te::Tensor>& params,
                                                      const target::Target& t)>
      group_compute;
  // A layout other than the plain one (e.g. oneDNN's "nChw16c") in which this implementation can
  // take some of the fused function's parameters and give its result, so that a value passed
  // between two of its calls stays in it instead of being reordered out of one and into the next
  // (native/kept_layouts.h decides where; the function's KeptLayout attribute says so to
  // group_compute). Null: plain layouts only.
  std::function<KeptLayoutSupport(const ir::FunctionNode& fn, const target::Target& t)> kept_layouts;
  // A native implementation fast only with its layout kept: its part in chains (ChainRole) for
  // this function. Null: None (taken without records only by the strategy's order).
  std::function<ChainRole(const ir::FunctionNode& fn, const target::Target& t)> chain_role;
};
inline constexpr int kDefaultPriority = 10;

// The op's native implementations in registration order (empty if it has none).
const std::vector<OpImpl>& implementations(ops::OpCode op);
// Among topi's own implementations of the op, the one that applies to the call with the highest
// priority (ties: the smaller name); nullptr if none applies. Lowering uses it for the ops of a
// group other than the anchor (whose implementation the strategy chooses, see strategy/).
const OpImpl* find_default(const ir::CallNode& call, const target::Target& t);
// Every extern C function any implementation may call.
const ExternTable& extern_table();

// Default schedule for injective/elementwise groups (and anything without its own): every
// non-output compute stage inlined; each output's loops fused, split by vector_lanes (inner
// vectorized) and the outer loop parallel when the output is large enough to pay for threads.
// by_rows: NCHW planes (batch 1) split between the threads by rows instead of by channels, where
// the kernels around split them so (rows_parallel in nn_util.h).
void schedule_injective(GroupSchedule& g, bool by_rows = false);

// ---- weight pre-packing (topi/nn_prepack.cpp): weights are constants, pack them once ----
// nn.conv2d with groups == 1 (or groups of whole blocks of output channels) and nn.dense, f32,
// read their weight in a blocked layout:
//   conv2d OIHW [O, C, KH, KW] -> [ceil(O/B), C, KH, KW, B];  dense [N, K] -> [ceil(N/B), K, B]
// with B = weight_block(target)
// (zero-padded to whole blocks). Given the plain weight, the kernel packs it itself on every call
// (correct, but it costs a pass over the weight per run); given the packed one (a parameter of the
// packed rank), it reads it directly.
//
// prepack_constants rewrites a fused module (run it after fuse_ops, before lowering): each call of
// a primitive function anchored on such an op whose weight argument is a Constant (used by the
// anchor only) gets the packed constant, and the function's weight parameter the packed type.
// A matmul whose right operand is a 2-d f32 constant B [K, N] becomes nn.dense with B^T packed
// (x . B == dense(x, B^T)): the layers of ONNX-exported transformers are such matmuls.
// The anchor call keeps its result type but its weight argument no longer satisfies the op's type
// relation: the result is for the native path only (do not re-infer types or run the reference
// executor on it). *packed (if given) receives the number of weights packed.
ir::Module prepack_constants(const ir::Module& m, const target::Target& t, int* packed = nullptr);
// The tensor-level steps (e.g. for an executor that binds constants itself): whether the op call's
// weight (argument 1, of the given plain shape) is packable, and the packed tensor (for matmul:
// the packed dense weight of B^T; the call must then be lowered as nn.dense).
bool packable_weight(const ir::CallNode& anchor, int64_t block);
Tensor pack_weight(const ir::CallNode& anchor, const Tensor& w, int64_t block);
// The plain rows of a weight packed in blocks of `block` rows, [ceil(rows/block), rest..., block]
// (conv2d's [O, C*KH*KW], dense's [N, K]), into out[rows * rest]: what an extern library reads.
void unpack_rows(const float* packed, int64_t rows, int64_t rest, int64_t block, float* out);
// "" when a (planned) nn.dense call is f32 with a packed weight and no empty operand, else why
// not: what an extern dense that takes the packed constant needs.
std::string why_not_packed_dense(const ir::CallNode& dense);

// ---- registration (one function per op family file; called once, on first use) ----
struct Registry {
  std::map<ops::OpCode, std::vector<OpImpl>> impls;
  ExternTable externs;
  // Names an unnamed implementation after the op; a name used twice for one op is a bug.
  void add(ops::OpCode op, OpImpl impl);
  // The op's only implementation, named after it, always applicable.
  void add(ops::OpCode op, ComputeFn compute, std::function<void(GroupSchedule& g)> schedule) {
    OpImpl i;
    i.compute = std::move(compute);
    i.schedule = std::move(schedule);
    add(op, std::move(i));
  }
  void add_extern(const std::string& symbol, void* fn);
};
void register_elementwise(Registry& r);  // topi/elementwise.cpp: unary, binary (broadcasting), where, cast, clip, ...
void register_transform(Registry& r);    // topi/transform.cpp: reshape, transpose, concat, split, slice, gather, ...
void register_reduce(Registry& r);       // topi/reduce.cpp: sum/mean/max/..., argmax/argmin, topk
void register_nn(Registry& r);           // topi/nn_*.cpp: conv2d, dense, matmul, pools, softmax, norms, pad, resize, ...

}  // namespace sy::topi
