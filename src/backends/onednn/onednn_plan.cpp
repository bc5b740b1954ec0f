// Lowering of an external function to oneDNN primitives, and their execution.
//
// Build: the body is walked producers first. Composite calls whose body is an anchor (conv2d,
// dense, matmul, batch_norm) followed by a chain of activations and adds become ONE primitive with
// post-ops (eltwise; sum for a residual of the result's shape, written in place when the residual
// dies there; binary for a broadcast operand); other composites and plain ops become one primitive
// each. Convolutions choose their layouts (format_tag::any), so activations stay blocked between
// them; a reorder is inserted only where a consumer needs another layout (region boundary, reshape,
// transpose, softmax, layer-norm, matmul). Constant weights are reordered once, here. Intermediate
// buffers are reused by liveness (a pool keyed by size) and allocated once; one scratchpad is
// shared by all primitives.
#include "backends/onednn/onednn_plan.h"

#include <omp.h>

#include <algorithm>
#include <functional>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/onednn/onednn_ops.h"
#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "pattern/idioms.h"

namespace sy::backends::onednn {

namespace dn = dnnl;
using ops::OpCode;
using md_t = dn::memory::desc;
using dims_t = dn::memory::dims;
using tag = dn::memory::format_tag;
constexpr auto f32 = dn::memory::data_type::f32;

namespace {

dn::engine& cpu_engine() {
  static dn::engine* e = new dn::engine(dn::engine::kind::cpu, 0);
  return *e;
}

dims_t to_dims(const Shape& s) { return s.empty() ? dims_t{1} : dims_t(s.begin(), s.end()); }

dims_t row_major_strides(const dims_t& d) {
  dims_t st(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * d[i + 1];
  return st;
}

// Row-major; a rank-0 shape is viewed as [1] (Shape and dims_t are the same type).
md_t plain_md(const dims_t& d0) {
  dims_t d = to_dims(d0);
  return md_t(d, f32, row_major_strides(d));
}
md_t any_md(const dims_t& d) { return md_t(d, f32, tag::any); }

// oneDNN's own reference loops ("ref:any"): correct, but 10-100x slower than its JIT kernels
// (a broadcast multiply on a blocked layout took 84 ms of EfficientNet's squeeze-excitation).
template <typename PD>
bool is_reference(const PD& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// The layouts an activation can have in a region: plain (inputs, reshapes), oneDNN's channel
// blocks (what convolutions choose: 16 with AVX-512, 8 with AVX2, 4 with SSE4.1) and channels-last.
const std::vector<std::pair<const char*, tag>>& layouts_of_rank(size_t rank) {
  static const std::vector<std::pair<const char*, tag>> r4 = {
      {"abcd", tag::abcd}, {"aBcd16b", tag::aBcd16b}, {"aBcd8b", tag::aBcd8b}, {"aBcd4b", tag::aBcd4b}, {"acdb", tag::acdb}};
  static const std::vector<std::pair<const char*, tag>> r5 = {
      {"abcde", tag::abcde}, {"aBcde16b", tag::aBcde16b}, {"aBcde8b", tag::aBcde8b}, {"acdeb", tag::acdeb}};
  static const std::vector<std::pair<const char*, tag>> none;
  return rank == 4 ? r4 : rank == 5 ? r5 : none;
}

// The broadcast operand's layout for dst = a op b (b broadcasts to a's dims): plain, or, when
// oneDNN 2.6 has only its reference loop for that (a blocked a and a per-channel b, as the
// squeeze-excitation scale on AVX2), a's own layout. The latter only for b = [N, C, 1, ...] of a's
// N and C: with b broadcast over the batch as well (a scalar added to a 2-image batch), oneDNN's
// JIT kernel on a blocked b skipped the operation (found by tests/diff on AVX2). The first that
// is not a reference kernel is taken; *reference says whether none was.
md_t broadcast_layout(dn::algorithm alg, const md_t& amd, const dims_t& bd, bool* reference) {
  std::vector<md_t> candidates = {plain_md(bd)};
  dims_t ad(amd.data.dims, amd.data.dims + amd.data.ndims);
  bool per_channel = ad.size() >= 3 && bd.size() == ad.size() && bd[0] == ad[0] && bd[1] == ad[1];
  for (size_t i = 2; i < bd.size(); ++i) per_channel &= bd[i] == 1;
  if (per_channel)
    for (const auto& [name, t] : layouts_of_rank(ad.size()))
      if (t != tag::abcd && t != tag::abcde && md_t(ad, f32, t) == amd) candidates.push_back(md_t(bd, f32, t));
  for (const md_t& bmd : candidates) {
    try {
      dn::binary::primitive_desc pd(dn::binary::desc(alg, amd, bmd, amd), cpu_engine());
      if (!is_reference(pd)) {
        *reference = false;
        return bmd;
      }
    } catch (const dn::error&) {
    }
  }
  *reference = true;
  return candidates.front();
}

// When a's own layout has no JIT kernel for the broadcast (a per-channel scale on channel blocks
// of 8 on an AVX-512 CPU, where grouped convolutions of 8-channel groups choose them: RegNet-Y's
// squeeze-excitation multiplies took 39 of its 45 ms in oneDNN's reference loop), the layouts a
// can be reordered into, channels-last first (where oneDNN 2.6 has one for per-channel
// operands): the first with a JIT kernel, as {a's layout, b's layout}; nullopt if none has one.
// Only for a binary that runs as its own step: the claim-time check (broadcast_binary_reference)
// does not count on it, because a claimed broadcast may instead be fused as a post-op of the
// primitive before it, with no reorder (Swin-T's attention bias, claimed so, made its matmuls run
// oneDNN's reference kernel: 49 -> 643 ms).
std::optional<std::pair<md_t, md_t>> broadcast_relayout(dn::algorithm alg, const md_t& amd, const dims_t& bd) {
  const dims_t ad(amd.data.dims, amd.data.dims + amd.data.ndims);
  std::vector<tag> order;
  for (const auto& [name, t] : layouts_of_rank(ad.size()))
    if (t == tag::acdb || t == tag::acdeb) order.insert(order.begin(), t);
    else order.push_back(t);
  for (tag t : order) {
    const md_t md(ad, f32, t);
    if (md == amd) continue;
    bool reference = false;
    md_t bmd = broadcast_layout(alg, md, bd, &reference);
    if (!reference) return std::make_pair(md, bmd);
  }
  return std::nullopt;
}

// Pads a shape with leading ones to `rank` (numpy broadcasting alignment).
dims_t pad_dims(const Shape& s, size_t rank) {
  dims_t d(rank, 1);
  for (size_t i = 0; i < s.size(); ++i) d[rank - s.size() + i] = s[i];
  return d;
}

bool is_plain(const md_t& md) {
  if (md.data.format_kind != dnnl_blocked) return false;
  dims_t d(md.data.dims, md.data.dims + md.data.ndims);
  if (md.data.format_desc.blocking.inner_nblks != 0) return false;
  dims_t st = row_major_strides(d);
  for (int i = 0; i < md.data.ndims; ++i)
    if (d[i] != 1 && md.data.format_desc.blocking.strides[i] != st[i]) return false;
  for (int i = 0; i < md.data.ndims; ++i)
    if (md.data.padded_dims[i] != md.data.dims[i] || md.data.padded_offsets[i] != 0) return false;
  return md.data.offset0 == 0;
}

dn::algorithm elt_alg(EltAlg a) {
  using A = dn::algorithm;
  switch (a) {
    case EltAlg::Relu: return A::eltwise_relu;
    case EltAlg::Tanh: return A::eltwise_tanh;
    case EltAlg::Elu: return A::eltwise_elu;
    case EltAlg::Square: return A::eltwise_square;
    case EltAlg::Abs: return A::eltwise_abs;
    case EltAlg::Sqrt: return A::eltwise_sqrt;
    case EltAlg::Linear: return A::eltwise_linear;
    case EltAlg::SoftRelu: return A::eltwise_soft_relu;
    case EltAlg::Mish: return A::eltwise_mish;
    case EltAlg::Logistic: return A::eltwise_logistic;
    case EltAlg::Exp: return A::eltwise_exp;
    case EltAlg::GeluTanh: return A::eltwise_gelu_tanh;
    case EltAlg::GeluErf: return A::eltwise_gelu_erf;
    case EltAlg::Log: return A::eltwise_log;
    case EltAlg::Clip: return A::eltwise_clip;
    case EltAlg::Pow: return A::eltwise_pow;
    case EltAlg::Round: return A::eltwise_round;
    case EltAlg::HardSwish: return A::eltwise_hardswish;
    case EltAlg::Swish: return A::eltwise_swish;
  }
  return A::eltwise_relu;
}

dn::algorithm binary_alg(OpCode op) {
  switch (op) {
    case OpCode::Add: return dn::algorithm::binary_add;
    case OpCode::Sub: return dn::algorithm::binary_sub;
    case OpCode::Mul: return dn::algorithm::binary_mul;
    case OpCode::Div: return dn::algorithm::binary_div;
    case OpCode::Maximum: return dn::algorithm::binary_max;
    case OpCode::Minimum: return dn::algorithm::binary_min;
    default: SY_CHECK(false) << "not a binary op: " << ops::op_name(op);
  }
  return dn::algorithm::binary_add;
}

// A post-op of a fused composite, in application order.
struct PostOp {
  bool is_binary = false;
  std::vector<EltStep> elts;  // eltwise
  OpCode op{};                // binary
  ir::Expr operand;           // binary: the other operand (resolved to the region's scope)
};

struct Buffer {
  enum Kind { Internal, Input, Const, Output } kind = Internal;
  size_t bytes = 0;
  int refs = 0;     // live values on it (build time)
  int index = -1;   // Input/Output: which
  Tensor tensor;    // Const: a constant's storage, or owned storage for reordered weights
};

struct Value {
  md_t md;
  int buf = -1;
};

struct Step {
  dn::primitive prim;
  std::vector<std::pair<int, int>> args;  // oneDNN arg -> value
  bool scratch = false;
  // Run on one thread: a squeeze-and-excitation block's global pooling and its per-channel
  // multiply. oneDNN splits both over channels, which in NHWC interleaves the threads' cache
  // lines, so that each thread reads half of what the other wrote. On one thread the multiply
  // finds the tensor where the pooling left it. EfficientNet-B0, 2 threads: the two took 1.21
  // ms per inference against 0.38 on one thread (ONEDNN_VERBOSE); whole model 5.65 -> 5.08 ms.
  bool one_thread = false;
  // Instead of prim: a step of our own (the channel concatenation in NHWC below), given the
  // memories of args in order.
  std::function<void(const std::vector<dn::memory>&)> own;
  std::unordered_map<int, dn::memory> bound;  // filled at finalize
  std::vector<dn::memory> bound_in_order;     // the same, for own
};

size_t round_up(size_t n) { return (n + 63) / 64 * 64; }

// A batch-norm (+ ReLU) applied by the channel concatenation that feeds it (set after the
// concatenation's step is made: see batch_norm_in_concat).
struct ConcatBatchNorm {
  bool on = false, relu = false;
  std::vector<float> mean, mul, shift;  // y = (x - mean) * mul + shift per channel
};

// A dense 4-d NHWC layout (strides C*H*W, 1, W*C, C; no blocking, no offset).
bool is_dense_nhwc(const dn::memory::desc& md) {
  const auto& d = md.data;
  if (d.ndims != 4 || d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.offset0 != 0 ||
      d.data_type != dnnl_f32)
    return false;
  const int64_t C = d.dims[1], H = d.dims[2], W = d.dims[3];
  const auto* st = d.format_desc.blocking.strides;
  return (d.dims[0] == 1 || st[0] == C * H * W) && st[1] == 1 && (H == 1 || st[2] == W * C) && (W == 1 || st[3] == C);
}

// b is one value per channel of out (N, C, 1, 1 ... against N, C, H, W ...).
bool per_channel(const Shape& b, const Shape& out) {
  if (out.size() < 3 || b.size() != out.size() || b[1] != out[1]) return false;
  for (size_t d = 2; d < b.size(); ++d)
    if (b[d] != 1) return false;
  return true;
}

}  // namespace

struct WeightStore {
  struct Entry {
    md_t user, target;
    Tensor data;
  };
  std::mutex mu;
  std::unordered_map<const ir::ExprNode*, std::vector<Entry>> entries;
};

std::shared_ptr<WeightStore> make_weight_store() { return std::make_shared<WeightStore>(); }

struct Plan::Impl {
  std::string symbol;
  ir::Expr fn_expr;
  std::shared_ptr<WeightStore> store;
  const ir::FunctionNode* fn = nullptr;
  dn::stream stream{cpu_engine()};
  std::vector<Buffer> bufs;
  std::vector<Value> vals;
  std::vector<Step> steps;
  std::vector<int> free_bufs;
  size_t scratch_bytes = 0;
  PlanStats stats;

  // Build state
  std::unordered_map<const ir::ExprNode*, ir::Expr> binding;  // composite param -> outer expr
  std::unordered_map<const ir::ExprNode*, int> expr_val;
  std::unordered_map<const ir::ExprNode*, int> uses;
  // Our own concatenations' values: the batch-norm they may take on, and their step.
  std::unordered_map<int, std::pair<std::shared_ptr<ConcatBatchNorm>, size_t>> own_concats;
  // A constant's values laid out for a primitive, keyed by how they were read (`user`: a tied
  // weight is read as [K, N] by one matmul and transposed by another) and the layout asked for.
  struct CachedWeight {
    md_t user, target;
    int value;
  };
  std::unordered_map<const ir::ExprNode*, std::vector<CachedWeight>> weight_cache;
  // x * s (s one value per input channel) read only by a convolution, which takes s into its
  // weights instead (see find_weight_scales); s_value: s, plain, held until that convolution.
  struct WeightScale {
    ir::Expr x, s;
    int s_value = -1;
  };
  std::unordered_map<const ir::ExprNode*, WeightScale> weight_scales;
  std::string where;  // op being lowered, for messages
  const std::unordered_set<const ir::ExprNode*>* inner_scope = nullptr;

  // Run state
  std::vector<int> input_vals_of;   // value -> input index (parallel arrays below)
  std::vector<dn::memory> mems;
  std::vector<std::vector<int>> input_values;   // per input: values on it
  std::vector<std::vector<int>> output_values;  // per output
  std::vector<ir::Type> output_types;
  std::vector<Tensor> scratch_tensor;
  Tensor arena;

  // ---------------------------------------------------------------- values and buffers
  int add_buffer(Buffer b) {
    bufs.push_back(std::move(b));
    return static_cast<int>(bufs.size()) - 1;
  }
  int add_value(const md_t& md, int buf) {
    vals.push_back({md, buf});
    bufs[static_cast<size_t>(buf)].refs++;
    return static_cast<int>(vals.size()) - 1;
  }
  // A fresh intermediate from the pool (best fit; else grow the largest free buffer; else new).
  int new_value(const md_t& md) {
    const size_t need = round_up(md.get_size());
    int best = -1;
    for (size_t i = 0; i < free_bufs.size(); ++i) {
      const Buffer& b = bufs[static_cast<size_t>(free_bufs[i])];
      if (b.bytes >= need && (best < 0 || b.bytes < bufs[static_cast<size_t>(free_bufs[best])].bytes))
        best = static_cast<int>(i);
    }
    if (best < 0)
      for (size_t i = 0; i < free_bufs.size(); ++i)
        if (best < 0 || bufs[static_cast<size_t>(free_bufs[i])].bytes > bufs[static_cast<size_t>(free_bufs[best])].bytes)
          best = static_cast<int>(i);
    int buf;
    if (best >= 0) {
      buf = free_bufs[static_cast<size_t>(best)];
      free_bufs.erase(free_bufs.begin() + best);
      bufs[static_cast<size_t>(buf)].bytes = std::max(bufs[static_cast<size_t>(buf)].bytes, need);
    } else {
      Buffer b;
      b.bytes = need;
      buf = add_buffer(std::move(b));
    }
    return add_value(md, buf);
  }
  // Another view (md) of v's buffer; holds its own reference.
  int alias(int v, const md_t& md) { return add_value(md, vals[static_cast<size_t>(v)].buf); }
  void release(int v) {
    Buffer& b = bufs[static_cast<size_t>(vals[static_cast<size_t>(v)].buf)];
    SY_CHECK(b.refs > 0) << "buffer released twice";
    if (--b.refs == 0 && b.kind == Buffer::Internal) free_bufs.push_back(vals[static_cast<size_t>(v)].buf);
  }
  const md_t& md_of(int v) const { return vals[static_cast<size_t>(v)].md; }
  int buf_of(int v) const { return vals[static_cast<size_t>(v)].buf; }

  // ---------------------------------------------------------------- steps
  template <typename PD>
  void add_step(const PD& pd, dn::primitive prim, std::vector<std::pair<int, int>> args) {
    Step s;
    s.prim = std::move(prim);
    s.args = std::move(args);
    const size_t sp = pd.scratchpad_desc().get_size();
    s.scratch = sp > 0;
    scratch_bytes = std::max(scratch_bytes, sp);
    steps.push_back(std::move(s));
    stats.primitives++;
    stats.kernels.push_back(pd.impl_info_str());
    // Not silent: the claim-time checks (see broadcast_binary_reference) keep the known cases out.
    if (is_reference(pd)) {
      stats.reference_kernels.push_back(where + ": " + pd.impl_info_str());
      std::fprintf(stderr, "switchyard: warning: onednn region %s: %s runs oneDNN's reference kernel (%s): slow\n",
                   symbol.c_str(), where.c_str(), pd.impl_info_str());
    }
  }
  static dn::primitive_attr base_attr() {
    dn::primitive_attr a;
    a.set_scratchpad_mode(dn::scratchpad_mode::user);
    return a;
  }
  [[noreturn]] void fail(const std::string& what) {
    throw Error("onednn region " + symbol + ": " + where + ": " + what);
  }
  template <typename F>
  auto guard(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const dn::error& e) {
      fail(std::string("oneDNN rejected the primitive (") + e.what() + ")");
    }
  }

  // A view of v in md `target`: v itself (a new reference) when it already has that layout, else
  // a reorder into a fresh value. The caller releases the result after its step.
  int to_md(int v, const md_t& target) {
    if (md_of(v) == target) return alias(v, target);
    int out = new_value(target);
    auto pd = guard([&] {
      return dn::reorder::primitive_desc(cpu_engine(), md_of(v), cpu_engine(), target, base_attr());
    });
    add_step(pd, dn::reorder(pd), {{DNNL_ARG_FROM, v}, {DNNL_ARG_TO, out}});
    stats.reorders++;
    return out;
  }
  int to_plain(int v, const Shape& shape) {
    if (is_plain(md_of(v))) return alias(v, plain_md(shape));
    return to_md(v, plain_md(shape));
  }

  // ---------------------------------------------------------------- IR values
  ir::Expr resolve(const ir::Expr& e) const {
    auto it = binding.find(e.get());
    return it == binding.end() ? e : resolve(it->second);
  }
  bool is_const(const ir::Expr& e) const { return resolve(e)->kind == ir::ExprKind::Constant; }
  const Tensor& const_tensor(const ir::Expr& e) const { return resolve(e)->as<ir::ConstantNode>()->value; }

  // The value of an IR expression (a new reference is NOT taken).
  int value_of(const ir::Expr& e0) {
    ir::Expr e = resolve(e0);
    auto it = expr_val.find(e.get());
    if (it != expr_val.end()) return it->second;
    if (auto* c = e->as<ir::ConstantNode>()) {
      if (c->value.dtype() != DType::f32) fail("constant of dtype " + std::string(dtype_name(c->value.dtype())));
      Buffer b;
      b.kind = Buffer::Const;
      b.tensor = c->value;
      b.bytes = c->value.nbytes();
      int v = add_value(plain_md(c->value.shape()), add_buffer(std::move(b)));
      expr_val[e.get()] = v;
      return v;
    }
    if (auto* t = e->as<ir::TupleGetItemNode>()) {
      ir::Expr tup = resolve(t->tuple);
      if (auto* tn = tup->as<ir::TupleNode>()) return value_of(tn->fields[static_cast<size_t>(t->index)]);
    }
    SY_CHECK(false) << "onednn region " << symbol << ": value used before it was computed";
    return -1;
  }
  // Whether e's value is used for the last time by the node being lowered and may be overwritten.
  bool dies_here(const ir::Expr& e0) {
    ir::Expr e = resolve(e0);
    if (e->kind == ir::ExprKind::Constant) return false;
    // Inside a composite lowered op by op, values from outside may still be read by later ops.
    if (inner_scope && !inner_scope->count(e.get())) return false;
    auto it = uses.find(e.get());
    if (it == uses.end() || it->second != 1) return false;
    const Buffer& b = bufs[static_cast<size_t>(buf_of(value_of(e)))];
    return b.kind == Buffer::Internal && b.refs == 1;
  }
  void consume(const ir::Expr& e0) {
    ir::Expr e = resolve(e0);
    if (e->kind == ir::ExprKind::Constant) return;
    auto it = uses.find(e.get());
    SY_CHECK(it != uses.end() && it->second > 0) << "onednn region " << symbol << ": use count underflow";
    if (--it->second == 0) {
      auto v = expr_val.find(e.get());
      if (v != expr_val.end()) release(v->second);
    }
  }
  void count_uses(const ir::Expr& body) {
    for (const ir::Expr& e : ir::post_order(body))
      for (const ir::Expr& in : ir::node_inputs(e))
        if (in->kind != ir::ExprKind::Function) uses[in.get()]++;
  }

  // A constant's data in layout `target` (reordered once, now); or for a runtime weight, a per-run
  // reorder. `user` describes the data as stored (may reinterpret the shape, e.g. grouped conv).
  int weight(const ir::Expr& e0, const md_t& user, const md_t& target, bool* temp) {
    ir::Expr e = resolve(e0);
    if (auto* c = e->as<ir::ConstantNode>()) {
      *temp = false;
      for (const CachedWeight& w : weight_cache[e.get()])
        if (w.user == user && w.target == target) return w.value;
      if (c->value.dtype() != DType::f32) fail("weight of dtype " + std::string(dtype_name(c->value.dtype())));
      Buffer b;
      b.kind = Buffer::Const;
      b.bytes = target.get_size();
      // Shared by the module's plans (one per thread count): reordered once per layout.
      std::lock_guard<std::mutex> lock(store->mu);
      for (const WeightStore::Entry& w : store->entries[e.get()])
        if (w.user == user && w.target == target) b.tensor = w.data;
      if (!b.tensor.defined()) {
        b.tensor = Tensor(DType::u8, {static_cast<int64_t>(round_up(b.bytes))});
        dn::memory src(user, cpu_engine(), const_cast<void*>(c->value.raw()));
        dn::memory dst(target, cpu_engine(), b.tensor.raw());
        guard([&] {
          dn::reorder(src, dst).execute(stream, src, dst);
          stream.wait();
          return 0;
        });
        store->entries[e.get()].push_back({user, target, b.tensor});
        stats.weight_bytes += b.bytes;
      }
      int v = add_value(target, add_buffer(std::move(b)));
      weight_cache[e.get()].push_back({user, target, v});
      return v;
    }
    *temp = true;
    int plain = to_plain(value_of(e), ir::shape_of(e));
    int view = alias(plain, user);
    release(plain);
    int out = to_md(view, target);
    release(view);
    return out;
  }

  // The weights of a convolution whose input is x * s, with s taken in: w[o][i] * s[i], written
  // by one reorder (runtime scales along the input channels) into the layout the convolution
  // asked for. Each run, as s is data; it replaces the multiply's pass over x.
  int scaled_weight(const ir::Expr& we, const md_t& user, const md_t& target, WeightScale& ws, bool* temp) {
    *temp = true;
    dn::primitive_attr attr = base_attr();
    attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
    auto pd = guard([&] { return dn::reorder::primitive_desc(cpu_engine(), user, cpu_engine(), target, attr); });
    int w = value_of(we);
    int scales = alias(ws.s_value, md_t({user.data.dims[1]}, f32, tag::a));
    int out = new_value(target);
    add_step(pd, dn::reorder(pd), {{DNNL_ARG_FROM, w}, {DNNL_ARG_TO, out}, {DNNL_ARG_ATTR_OUTPUT_SCALES, scales}});
    release(scales);
    release(ws.s_value);
    ws.s_value = -1;
    stats.scaled_weights++;
    return out;
  }

  // ---------------------------------------------------------------- post-ops
  // Fills `po` with the post-ops [from, to) and returns the binary operands' values (taken).
  // `dst_dims` are the primitive's destination dims; operands are viewed in that rank.
  struct Fused {
    dn::post_ops po;
    std::vector<std::pair<int, int>> args;  // post-op arg -> value (released after the step)
    int sum_index = -1;                     // index into posts of the sum (residual), if any
  };
  // The layout of a binary post-op's operand on a dst of `dst_dims` whose logical shape is
  // `out_shape`: full-shape operands keep the dst's layout (or are viewed plain in the dst's rank
  // when the dst is collapsed); broadcast operands are viewed plain in the dst's rank. nullopt
  // when it cannot be expressed (then the post-op runs separately).
  static std::optional<md_t> post_operand_md(const Shape& s, const Shape& out_shape, const dims_t& dst_dims,
                                             const md_t& dst_md) {
    if (s == out_shape) {
      if (to_dims(out_shape) == dst_dims) return dst_md;
      if (shape_numel(s) != shape_numel(Shape(dst_dims.begin(), dst_dims.end()))) return std::nullopt;
      return plain_md(dst_dims);
    }
    dims_t d = pad_dims(s, out_shape.size());
    // Collapsed dst (dense on [M, K]): only operands broadcast over all leading dims fit.
    if (dst_dims.size() != d.size()) {
      for (size_t i = 0; i + 1 < d.size(); ++i)
        if (d[i] != 1) return std::nullopt;
      dims_t dd(dst_dims.size(), 1);
      dd.back() = d.back();
      d = dd;
    }
    return plain_md(d);
  }
  // The operand's value in that layout (md, from post_operand_md).
  int post_operand(const ir::Expr& operand, const md_t& md, const Shape& out_shape, const dims_t& dst_dims) {
    const Shape& s = ir::shape_of(operand);
    int v = value_of(operand);
    if (s == out_shape && to_dims(out_shape) == dst_dims) return to_md(v, md);
    int p = to_plain(v, s);
    int view = alias(p, md);
    release(p);
    return view;
  }

  // Builds post-ops for posts[0..min(n, limit)): eltwise always; the first full-shape
  // non-constant add becomes a sum (residual); the rest binary. Stops at the first post-op it
  // cannot express; returns how many were taken. `dry`: only f.po and f.sum_index, no values
  // (to ask oneDNN which implementation the primitive gets with them).
  size_t build_post_ops(const std::vector<PostOp>& posts, const Shape& out_shape, const dims_t& dst_dims,
                        const md_t& dst_md, bool allow_sum, Fused& f, size_t limit = SIZE_MAX, bool dry = false) {
    size_t taken = 0;
    int bin_idx = 0;
    for (size_t i = 0; i < std::min(posts.size(), limit); ++i) {
      const PostOp& p = posts[i];
      if (!p.is_binary) {
        for (const EltStep& s : p.elts) f.po.append_eltwise(1.f, elt_alg(s.alg), s.alpha, s.beta);
        bin_idx += static_cast<int>(p.elts.size());
        ++taken;
        continue;
      }
      const bool full = ir::shape_of(p.operand) == out_shape;
      if (allow_sum && f.sum_index < 0 && p.op == OpCode::Add && full && !is_const(p.operand)) {
        f.po.append_sum(1.f);
        f.sum_index = static_cast<int>(i);
        ++bin_idx;
        ++taken;
        continue;
      }
      std::optional<md_t> md = post_operand_md(ir::shape_of(p.operand), out_shape, dst_dims, dst_md);
      if (!md) break;
      f.po.append_binary(binary_alg(p.op), *md);
      if (!dry)
        f.args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(bin_idx) | DNNL_ARG_SRC_1, post_operand(p.operand, *md, out_shape, dst_dims)});
      ++bin_idx;
      ++taken;
    }
    if (!dry) stats.fused_post_ops += static_cast<int>(taken);
    return taken;
  }

  // How many of posts a primitive takes as post-ops: all that build_post_ops can express, unless
  // oneDNN then has only its reference kernel for the primitive while it has a JIT kernel
  // without its binary post-ops (oneDNN 2.6: a convolution whose binary post-op broadcasts over
  // the channels, a positional table added to every channel; a matmul adding one value per
  // row). Then the post-ops stop before the first binary one and the rest run as steps of their
  // own, which find layouts with JIT kernels (binary()). make_pd(attr) creates the primitive
  // descriptor as the caller will.
  template <typename MakePD>
  size_t post_ops_without_reference(const std::vector<PostOp>& posts, const Shape& out_shape, const dims_t& dst_dims,
                                    const md_t& dst_md, bool allow_sum, MakePD&& make_pd) {
    Fused all;
    const size_t n = build_post_ops(posts, out_shape, dst_dims, dst_md, allow_sum, all, SIZE_MAX, true);
    size_t first_binary = 0;
    while (first_binary < n && (!posts[first_binary].is_binary || static_cast<int>(first_binary) == all.sum_index))
      ++first_binary;
    if (first_binary == n) return n;  // no binary post-op: nothing to ask oneDNN
    dn::primitive_attr attr = base_attr();
    attr.set_post_ops(all.po);
    if (!is_reference(make_pd(attr))) return n;
    Fused some;
    const size_t k = build_post_ops(posts, out_shape, dst_dims, dst_md, allow_sum, some, first_binary, true);
    dn::primitive_attr fewer = base_attr();
    fewer.set_post_ops(some.po);
    if (is_reference(make_pd(fewer))) return n;
    stats.post_ops_left_for_reference++;
    return k;
  }

  // The destination of a primitive with post-ops: for a sum, the residual's buffer when it dies
  // here (in place), else a copy of the residual in the dst layout.
  int make_dst(const md_t& dst_md, const Fused& f, const std::vector<PostOp>& posts, const Shape& out_shape,
               const std::vector<int>& inputs_bufs) {
    if (f.sum_index < 0) return new_value(dst_md);
    const ir::Expr& r = posts[static_cast<size_t>(f.sum_index)].operand;
    int rv = value_of(r);
    const bool clash = std::find(inputs_bufs.begin(), inputs_bufs.end(), buf_of(rv)) != inputs_bufs.end();
    if (!clash && dies_here(r) && md_of(rv) == dst_md) return alias(rv, dst_md);
    int dst = new_value(dst_md);
    md_t src_md = md_of(rv);
    if (dst_md.dims() != src_md.dims()) {  // collapsed dense dst: view the plain residual
      int p = to_plain(rv, out_shape);
      src_md = plain_md(dst_md.dims());
      auto pd = guard([&] { return dn::reorder::primitive_desc(cpu_engine(), src_md, cpu_engine(), dst_md, base_attr()); });
      int view = alias(p, src_md);
      add_step(pd, dn::reorder(pd), {{DNNL_ARG_FROM, view}, {DNNL_ARG_TO, dst}});
      release(view);
      release(p);
    } else {
      auto pd = guard([&] { return dn::reorder::primitive_desc(cpu_engine(), src_md, cpu_engine(), dst_md, base_attr()); });
      add_step(pd, dn::reorder(pd), {{DNNL_ARG_FROM, rv}, {DNNL_ARG_TO, dst}});
    }
    stats.reorders++;
    return dst;
  }

  // Applies posts[from..] as separate primitives on v (owned; returns the owned result).
  int apply_posts(int v, const std::vector<PostOp>& posts, size_t from, const Shape& out_shape) {
    for (size_t i = from; i < posts.size(); ++i) {
      const PostOp& p = posts[i];
      if (!p.is_binary) {
        for (const EltStep& s : p.elts) v = eltwise(v, s, /*in_place=*/true);
      } else {
        int other = value_of(p.operand);
        int out = binary(p.op, v, other, out_shape, ir::shape_of(p.operand), /*in_place=*/true);
        release(v);
        v = out;
      }
    }
    return v;
  }

  // ---------------------------------------------------------------- primitives
  // Eltwise on v; in place (reusing v's reference) when allowed, else into a new value.
  int eltwise(int v, const EltStep& s, bool in_place) {
    md_t md = md_of(v);
    auto make = [&](const md_t& m) {
      return guard([&] {
        return dn::eltwise_forward::primitive_desc(
            dn::eltwise_forward::desc(dn::prop_kind::forward_inference, elt_alg(s.alg), m, s.alpha, s.beta),
            base_attr(), cpu_engine());
      });
    };
    auto pd = make(md);
    if (is_reference(pd) && !is_plain(md)) {
      // oneDNN 2.6 runs eltwise on a blocked layout whose channels do not fill the block (the
      // 1x4x1x1 squeeze of EfficientNet on AVX2's 8-blocks) with its reference loop; in plain
      // layout it has a JIT kernel. The value is small there (one reorder of a few floats).
      const dims_t d(md.data.dims, md.data.dims + md.data.ndims);
      auto plain_pd = make(plain_md(d));
      if (!is_reference(plain_pd)) {
        int p = to_plain(v, Shape(d.begin(), d.end()));
        if (in_place) release(v);
        int out = in_place ? p : new_value(plain_pd.dst_desc());
        add_step(plain_pd, dn::eltwise_forward(plain_pd), {{DNNL_ARG_SRC, p}, {DNNL_ARG_DST, out}});
        if (!in_place) release(p);
        return out;
      }
    }
    int out = in_place ? v : new_value(pd.dst_desc());
    add_step(pd, dn::eltwise_forward(pd), {{DNNL_ARG_SRC, v}, {DNNL_ARG_DST, out}});
    return out;
  }

  // dst = a op b where a has the result's shape (b broadcasts). If in_place, a's reference is
  // reused for the result... only when a's buffer is not shared.
  int binary(OpCode op, int a, int b, const Shape& out_shape, const Shape& b_shape, bool in_place) {
    int bb;
    md_t amd = md_of(a);
    int moved = -1;  // a reordered into a layout with a JIT kernel for the broadcast
    if (b_shape == out_shape) {
      bb = to_md(b, amd);
    } else {
      const dims_t bd = pad_dims(b_shape, out_shape.size() ? out_shape.size() : 1);
      bool reference = false;
      md_t bmd = broadcast_layout(binary_alg(op), amd, bd, &reference);
      std::optional<std::pair<md_t, md_t>> other;
      if (reference) other = broadcast_relayout(binary_alg(op), amd, bd);
      if (other) {
        moved = to_md(a, other->first);
        a = moved;
        amd = other->first;
        bmd = other->second;
      }
      if (md_of(b) == bmd) {  // already there (a squeeze-excitation scale from a conv)
        bb = alias(b, bmd);
      } else {
        int p = to_plain(b, b_shape);
        int view = alias(p, plain_md(bd));
        release(p);
        bb = to_md(view, bmd);
        release(view);
      }
    }
    auto pd = guard([&] {
      return dn::binary::primitive_desc(dn::binary::desc(binary_alg(op), amd, md_of(bb), amd), base_attr(),
                                        cpu_engine());
    });
    // oneDNN 2.6's jit:uni binary with a broadcast operand, run in place on channel blocks that
    // pad the channels (3 of 16, or 1), leaves its source as it was: x + 1.1 came out x (seed
    // 52047 of the differential suite; OnednnOps.BroadcastBinaryOnPaddedChannelBlocks).
    bool padded = false;
    for (int i = 0; i < amd.data.ndims; ++i) padded = padded || amd.data.padded_dims[i] != amd.data.dims[i];
    const bool shared = bufs[static_cast<size_t>(buf_of(a))].refs != 1 ||
                        bufs[static_cast<size_t>(buf_of(a))].kind != Buffer::Internal || buf_of(a) == buf_of(bb) ||
                        (padded && b_shape != out_shape);
    // The reordered copy is this step's own, so the result may take its place.
    int out = ((in_place || moved >= 0) && !shared) ? alias(a, amd) : new_value(amd);
    add_step(pd, dn::binary(pd), {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, bb}, {DNNL_ARG_DST, out}});
    steps.back().one_thread = per_channel(b_shape, out_shape);
    release(bb);
    if (moved >= 0) release(moved);
    return out;
  }

  int conv2d(const ir::CallNode& c, const std::vector<ir::Expr>& args, const std::vector<PostOp>& posts) {
    const auto& a = c.attrs_as<ops::Conv2dAttrs>();
    const Shape& xs = ir::shape_of(args[0]);
    const Shape& ws = ir::shape_of(args[1]);
    const Shape& ys = c.type->shape;
    const int64_t g = a.groups;
    dims_t wdims = g == 1 ? to_dims(ws) : dims_t{g, ws[0] / g, ws[1], ws[2], ws[3]};
    md_t w_user = md_t(wdims, f32, g == 1 ? tag::oihw : tag::goihw);
    const bool has_bias = args.size() > 2;
    md_t b_md = has_bias ? plain_md(dims_t{ws[0]}) : md_t();
    dims_t strides{a.strides[0], a.strides[1]};
    dims_t dil{a.dilation[0] - 1, a.dilation[1] - 1};
    dims_t pl{a.padding[0], a.padding[1]}, pr{a.padding[2], a.padding[3]};
    int x = value_of(args[0]);
    // Post-op operand values must exist before the dst md is known; build attrs with any dst.
    md_t dst_any = any_md(to_dims(ys));
    auto make_pd = [&](const dn::primitive_attr& attr) {
      return guard([&] {
        auto d = has_bias ? dn::convolution_forward::desc(dn::prop_kind::forward_inference,
                                                          dn::algorithm::convolution_direct, any_md(to_dims(xs)),
                                                          any_md(wdims), b_md, dst_any, strides, dil, pl, pr)
                          : dn::convolution_forward::desc(dn::prop_kind::forward_inference,
                                                          dn::algorithm::convolution_direct, any_md(to_dims(xs)),
                                                          any_md(wdims), dst_any, strides, dil, pl, pr);
        return dn::convolution_forward::primitive_desc(d, attr, cpu_engine());
      });
    };
    // First pass without post-ops: learn the dst layout the convolution prefers; the second pass
    // (with the post-ops, whose operands were laid out for that dst) asks for it explicitly.
    md_t dst_md = make_pd(base_attr()).dst_desc();
    dst_any = dst_md;
    const size_t limit = post_ops_without_reference(posts, ys, to_dims(ys), dst_md, true, make_pd);
    Fused f;
    size_t taken = build_post_ops(posts, ys, to_dims(ys), dst_md, true, f, limit);
    dn::primitive_attr attr = base_attr();
    attr.set_post_ops(f.po);
    auto pd = make_pd(attr);
    int src = to_md(x, pd.src_desc());
    bool wtemp = false, btemp = false;
    auto scale = weight_scales.find(resolve(args[0]).get());
    int w = scale == weight_scales.end() ? weight(args[1], w_user, pd.weights_desc(), &wtemp)
                                         : scaled_weight(args[1], w_user, pd.weights_desc(), scale->second, &wtemp);
    int b = has_bias ? weight(args[2], b_md, pd.bias_desc(), &btemp) : -1;
    int dst = make_dst(dst_md, f, posts, ys, {buf_of(src), buf_of(x)});
    std::vector<std::pair<int, int>> sargs{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
    if (b >= 0) sargs.push_back({DNNL_ARG_BIAS, b});
    for (auto& pa : f.args) sargs.push_back(pa);
    add_step(pd, dn::convolution_forward(pd), sargs);
    release(src);
    if (wtemp) release(w);
    if (btemp) release(b);
    for (auto& pa : f.args) release(pa.second);
    return apply_posts(dst, posts, taken, ys);
  }

  // matmul of a [.., M, K] by b [.., K, N] (b_user describes b's storage, e.g. transposed dense
  // weights); collapses a to 2-D when b is 2-D.
  int matmul(const ir::CallNode& c, const ir::Expr& ae, const ir::Expr& be, bool b_transposed,
             const ir::Expr* bias, const std::vector<PostOp>& posts) {
    const Shape& as = ir::shape_of(ae);
    const Shape& bs = ir::shape_of(be);
    const Shape& ys = c.type->shape;
    const size_t r = ys.size();
    const bool two_d = bs.size() == 2;
    dims_t adims, bdims, ydims;
    const int64_t K = as.back();
    const int64_t N = ys.back();
    if (two_d) {
      const int64_t M = shape_numel(as) / K;
      adims = {M, K};
      bdims = {K, N};
      ydims = {M, N};
    } else {
      adims = pad_dims(as, r);
      bdims = pad_dims(bs, r);
      ydims = to_dims(ys);
    }
    // b's storage: [K, N] row-major, or dense weights [N, K] viewed transposed.
    dims_t bstr = row_major_strides(bdims);
    if (b_transposed) {
      bstr[bdims.size() - 1] = K;
      bstr[bdims.size() - 2] = 1;
    }
    md_t b_user(bdims, f32, bstr);
    const bool b_const = is_const(be);
    md_t bias_md = bias ? plain_md(pad_dims(ir::shape_of(*bias), ydims.size())) : md_t();
    int av = to_plain(value_of(ae), as);
    int a2 = alias(av, plain_md(adims));
    release(av);
    md_t y_md = plain_md(ydims);
    auto make_pd = [&](const dn::primitive_attr& attr) {
      return guard([&] {
        md_t bmd = b_const ? any_md(bdims) : b_user;
        auto d = bias ? dn::matmul::desc(plain_md(adims), bmd, bias_md, y_md) : dn::matmul::desc(plain_md(adims), bmd, y_md);
        return dn::matmul::primitive_desc(d, attr, cpu_engine());
      });
    };
    const size_t limit = post_ops_without_reference(posts, ys, ydims, y_md, true, make_pd);
    Fused f;
    size_t taken = build_post_ops(posts, ys, ydims, y_md, true, f, limit);
    dn::primitive_attr attr = base_attr();
    attr.set_post_ops(f.po);
    auto pd = make_pd(attr);
    int bv;
    bool btemp = false;
    if (b_const) {
      bv = weight(be, b_user, pd.weights_desc(), &btemp);
    } else {
      int p = to_plain(value_of(be), bs);
      bv = alias(p, b_user);
      release(p);
      btemp = true;
    }
    int biasv = -1;
    bool biastemp = false;
    if (bias) biasv = weight(*bias, bias_md, pd.bias_desc(), &biastemp);
    int dst = make_dst(pd.dst_desc(), f, posts, ys, {buf_of(a2), buf_of(bv)});
    std::vector<std::pair<int, int>> sargs{{DNNL_ARG_SRC, a2}, {DNNL_ARG_WEIGHTS, bv}, {DNNL_ARG_DST, dst}};
    if (biasv >= 0) sargs.push_back({DNNL_ARG_BIAS, biasv});
    for (auto& pa : f.args) sargs.push_back(pa);
    add_step(pd, dn::matmul(pd), sargs);
    release(a2);
    if (btemp) release(bv);
    if (biastemp) release(biasv);
    for (auto& pa : f.args) release(pa.second);
    int out = alias(dst, plain_md(ys));
    release(dst);
    return apply_posts(out, posts, taken, ys);
  }

  int pool(const ir::CallNode& c, const ir::Expr& xe) {
    const Shape& xs = ir::shape_of(xe);
    const Shape& ys = c.type->shape;
    dims_t kernel, strides, dil, pl, pr;
    dn::algorithm alg;
    if (c.op == OpCode::GlobalAvgPool2d || c.op == OpCode::GlobalMaxPool2d) {
      kernel = {xs[2], xs[3]};
      strides = {1, 1};
      dil = {0, 0};
      pl = pr = {0, 0};
      alg = c.op == OpCode::GlobalMaxPool2d ? dn::algorithm::pooling_max : dn::algorithm::pooling_avg_exclude_padding;
    } else {
      const auto& a = c.attrs_as<ops::Pool2dAttrs>();
      kernel = {a.kernel[0], a.kernel[1]};
      strides = {a.strides[0], a.strides[1]};
      dil = {a.dilation[0] - 1, a.dilation[1] - 1};
      pl = {a.padding[0], a.padding[1]};
      pr.resize(2);
      for (int d = 0; d < 2; ++d) {
        const int64_t k_eff = (a.kernel[d] - 1) * a.dilation[d] + 1;
        pr[d] = std::max<int64_t>(0, (ys[2 + d] - 1) * a.strides[d] + k_eff - xs[2 + d] - a.padding[d]);
      }
      alg = c.op == OpCode::MaxPool2d ? dn::algorithm::pooling_max
            : a.count_include_pad     ? dn::algorithm::pooling_avg_include_padding
                                      : dn::algorithm::pooling_avg_exclude_padding;
    }
    int x = value_of(xe);
    auto pd = guard([&] {
      return dn::pooling_v2_forward::primitive_desc(
          dn::pooling_v2_forward::desc(dn::prop_kind::forward_inference, alg, md_of(x), any_md(to_dims(ys)), strides,
                                       kernel, dil, pl, pr),
          base_attr(), cpu_engine());
    });
    int out = new_value(pd.dst_desc());
    std::vector<std::pair<int, int>> sargs{{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, out}};
    if (pd.workspace_desc().get_size() > 0) {
      int ws = new_value(pd.workspace_desc());
      sargs.push_back({DNNL_ARG_WORKSPACE, ws});
      add_step(pd, dn::pooling_v2_forward(pd), sargs);
      release(ws);
    } else {
      add_step(pd, dn::pooling_v2_forward(pd), sargs);
    }
    steps.back().one_thread = c.op == OpCode::GlobalAvgPool2d || c.op == OpCode::GlobalMaxPool2d;
    return out;
  }

  int batch_norm(const ir::CallNode& c, const std::vector<ir::Expr>& args, const std::vector<PostOp>& posts) {
    const auto& a = c.attrs_as<ops::BatchNormAttrs>();
    const Shape& xs = ir::shape_of(args[0]);
    int x = value_of(args[0]);
    const bool fuse_relu = !posts.empty() && !posts[0].is_binary && posts[0].elts.size() == 1 &&
                           posts[0].elts[0].alg == EltAlg::Relu && posts[0].elts[0].alpha == 0.f;
    if (int out = batch_norm_in_concat(args, x, static_cast<float>(a.epsilon), fuse_relu); out >= 0)
      return apply_posts(out, posts, fuse_relu ? 1 : 0, c.type->shape);
    auto flags = dn::normalization_flags::use_global_stats | dn::normalization_flags::use_scale |
                 dn::normalization_flags::use_shift;
    if (fuse_relu) flags = flags | dn::normalization_flags::fuse_norm_relu;
    md_t xmd = md_of(x);
    if (xs.size() == 2 && !is_plain(xmd)) xmd = plain_md(xs);
    int src = to_md(x, xmd);
    auto pd = guard([&] {
      return dn::batch_normalization_forward::primitive_desc(
          dn::batch_normalization_forward::desc(dn::prop_kind::forward_inference, xmd, static_cast<float>(a.epsilon),
                                                flags),
          base_attr(), cpu_engine());
    });
    const bool in_place = dies_here(args[0]) && buf_of(src) == buf_of(x);
    int out = in_place ? alias(src, pd.dst_desc()) : new_value(pd.dst_desc());
    auto cv = [&](const ir::Expr& e) {
      bool t;
      return weight(e, plain_md(dims_t{xs[1]}), plain_md(dims_t{xs[1]}), &t);
    };
    std::vector<std::pair<int, int>> sargs{{DNNL_ARG_SRC, src},       {DNNL_ARG_DST, out},
                                           {DNNL_ARG_SCALE, cv(args[1])}, {DNNL_ARG_SHIFT, cv(args[2])},
                                           {DNNL_ARG_MEAN, cv(args[3])},  {DNNL_ARG_VARIANCE, cv(args[4])}};
    int ws = -1;
    if (pd.workspace_desc().get_size() > 0) {
      ws = new_value(pd.workspace_desc());
      sargs.push_back({DNNL_ARG_WORKSPACE, ws});
    }
    add_step(pd, dn::batch_normalization_forward(pd), sargs);
    if (ws >= 0) release(ws);
    release(src);
    if (fuse_relu) stats.fused_post_ops++;
    return apply_posts(out, posts, fuse_relu ? 1 : 0, c.type->shape);
  }

  // A batch-norm (and its ReLU) whose input is our own channel concatenation, read by nothing
  // else, and whose statistics are constants: applied by the concatenation's copy, which writes
  // the normalized values instead of the plain ones (DenseNet's norm1 after every concat; the
  // separate batch-norm took 2.0 of its 20 ms). -1 when it does not apply.
  int batch_norm_in_concat(const std::vector<ir::Expr>& args, int x, float eps, bool relu) {
    auto it = own_concats.find(x);
    if (it == own_concats.end() || !dies_here(args[0])) return -1;
    const int64_t C = md_of(x).data.dims[1];
    std::vector<const float*> p;  // scale, shift, mean, variance
    for (size_t i = 1; i <= 4; ++i) {
      const auto* k = resolve(args[i])->as<ir::ConstantNode>();
      if (!k || k->value.dtype() != DType::f32 || k->value.numel() != C) return -1;
      p.push_back(k->value.data<float>());
    }
    ConcatBatchNorm& bn = *it->second.first;
    bn.on = true;
    bn.relu = relu;
    bn.mean.assign(p[2], p[2] + C);
    bn.shift.assign(p[1], p[1] + C);
    bn.mul.resize(static_cast<size_t>(C));
    for (int64_t k = 0; k < C; ++k) bn.mul[static_cast<size_t>(k)] = p[0][k] / std::sqrt(p[3][k] + eps);
    stats.kernels[it->second.second] += relu ? "+batch_norm+relu" : "+batch_norm";
    if (relu) stats.fused_post_ops++;
    own_concats.erase(it);
    return alias(x, md_of(x));
  }

  int softmax(const ir::CallNode& c, const ir::Expr& xe) {
    const Shape& xs = ir::shape_of(xe);
    const int axis = static_cast<int>(c.attrs_as<ops::AxisAttrs>().axis);
    int x = to_plain(value_of(xe), xs);
    md_t md = plain_md(xs);
    auto alg = c.op == OpCode::LogSoftmax ? dn::algorithm::softmax_log : dn::algorithm::softmax_accurate;
    auto pd = guard([&] {
      return dn::softmax_v2_forward::primitive_desc(
          dn::softmax_v2_forward::desc(dn::prop_kind::forward_inference, alg, md, md, xs.empty() ? 0 : axis),
          base_attr(), cpu_engine());
    });
    int out = new_value(md);
    add_step(pd, dn::softmax_v2_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, out}});
    release(x);
    return out;
  }

  int layer_norm(const ir::CallNode& c, const std::vector<ir::Expr>& args) {
    const auto& a = c.attrs_as<ops::LayerNormAttrs>();
    return layer_norm_of(args[0], static_cast<size_t>(a.axis), static_cast<float>(a.epsilon), &args[1],
                         args.size() > 2 ? &args[2] : nullptr);
  }

  int concat(const ir::CallNode& c, const std::vector<ir::Expr>& args) {
    const int axis = static_cast<int>(c.attrs_as<ops::AxisAttrs>().axis);
    std::vector<int> srcs;
    std::vector<md_t> mds;
    // All inputs in the first input's layout when that layout fits them all (same rank and the
    // same blocking), else plain.
    int first = value_of(args[0]);
    md_t target0 = md_of(first);
    bool use_first = true;
    for (const ir::Expr& e : args) {
      md_t m = md_of(value_of(e));
      if (m.data.format_kind != target0.data.format_kind ||
          m.data.format_desc.blocking.inner_nblks != target0.data.format_desc.blocking.inner_nblks)
        use_first = false;
      else if (target0.data.format_desc.blocking.inner_nblks > 0 &&
               (m.data.format_desc.blocking.inner_blks[0] != target0.data.format_desc.blocking.inner_blks[0] ||
                ir::shape_of(e)[static_cast<size_t>(axis)] % target0.data.format_desc.blocking.inner_blks[0] != 0))
        use_first = false;
    }
    auto take_srcs = [&](bool first_layout) {
      srcs.clear();
      mds.clear();
      for (const ir::Expr& e : args) {
        int v = value_of(e);
        int s = first_layout ? alias(v, md_of(v)) : to_plain(v, ir::shape_of(e));
        srcs.push_back(s);
        mds.push_back(md_of(s));
      }
    };
    take_srcs(use_first);
    if (axis == 1 && use_first && is_dense_nhwc(target0))
      if (int out = nhwc_channel_concat(srcs, c.type->shape); out >= 0) return out;
    auto make_pd = [&] { return guard([&] { return dn::concat::primitive_desc(axis, mds, cpu_engine(), base_attr()); }); };
    auto pd = make_pd();
    // oneDNN 2.6 has only its reference concat for some layouts its own primitives choose (an
    // unrolled LSTM's per-step concatenations come out "bacd"): plain sources take its simple one.
    if (use_first && is_reference(pd)) {
      for (int s : srcs) release(s);
      take_srcs(false);
      pd = make_pd();
    }
    int out = new_value(pd.dst_desc());
    std::vector<std::pair<int, int>> sargs{{DNNL_ARG_DST, out}};
    for (size_t i = 0; i < srcs.size(); ++i) sargs.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), srcs[i]});
    add_step(pd, dn::concat(pd), sargs);
    for (int s : srcs) release(s);
    return out;
  }

  // Concatenation along the channels of NHWC tensors, copied pixel by pixel. oneDNN 2.6 has
  // only its generic `simple:any` concat here, which spent 3.5 of DenseNet-121's 23 ms (2
  // threads) on the 58 concatenations of the dense blocks (up to 32 inputs of 32 channels each,
  // a 128-byte run per input and pixel); this loop takes -1 when a source is not dense NHWC.
  int nhwc_channel_concat(const std::vector<int>& srcs, const Shape& ys) {
    std::vector<int64_t> channels;
    for (int v : srcs) {
      if (!is_dense_nhwc(md_of(v))) return -1;
      channels.push_back(md_of(v).data.dims[1]);
    }
    const int64_t pixels = ys[0] * ys[2] * ys[3], total = ys[1];
    int out = new_value(md_t(to_dims(ys), f32, tag::acdb));
    auto bn = std::make_shared<ConcatBatchNorm>();
    Step st;
    st.own = [channels, pixels, total, bn](const std::vector<dn::memory>& m) {
      float* dst = static_cast<float*>(m[0].get_data_handle());
      std::vector<const float*> in;
      for (size_t i = 1; i < m.size(); ++i) in.push_back(static_cast<const float*>(m[i].get_data_handle()));
      const float *mean = bn->mean.data(), *mul = bn->mul.data(), *shift = bn->shift.data();
      const bool norm = bn->on, relu = bn->relu;
#pragma omp parallel for schedule(static)
      for (int64_t p = 0; p < pixels; ++p) {
        float* d = dst + p * total;
        int64_t at = 0;
        for (size_t i = 0; i < in.size(); ++i) {
          const int64_t c = channels[i];
          const float* src = in[i] + p * c;
          if (!norm) {
            std::memcpy(d + at, src, static_cast<size_t>(c) * sizeof(float));
          } else {
            for (int64_t k = 0; k < c; ++k) {
              const float y = (src[k] - mean[at + k]) * mul[at + k] + shift[at + k];
              d[at + k] = relu ? std::max(y, 0.f) : y;
            }
          }
          at += c;
        }
      }
    };
    own_concats[out] = {bn, steps.size()};
    st.args.push_back({DNNL_ARG_DST, out});
    for (size_t i = 0; i < srcs.size(); ++i) st.args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), srcs[i]});
    steps.push_back(std::move(st));
    stats.primitives++;
    stats.kernels.push_back("switchyard:nhwc_channel_concat");
    for (int v : srcs) release(v);
    return out;
  }

  int transpose(const ir::CallNode& c, const ir::Expr& xe) {
    const auto& perm = c.attrs_as<ops::TransposeAttrs>().perm;
    const Shape& xs = ir::shape_of(xe);
    int x = to_plain(value_of(xe), xs);
    dims_t in_st = row_major_strides(to_dims(xs));
    dims_t d(perm.size()), st(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      d[i] = xs[static_cast<size_t>(perm[i])];
      st[i] = in_st[static_cast<size_t>(perm[i])];
    }
    int view = alias(x, md_t(d, f32, st));
    release(x);
    int out = new_value(plain_md(d));
    auto pd = guard([&] { return dn::reorder::primitive_desc(cpu_engine(), md_of(view), cpu_engine(), md_of(out), base_attr()); });
    add_step(pd, dn::reorder(pd), {{DNNL_ARG_FROM, view}, {DNNL_ARG_TO, out}});
    release(view);
    return out;
  }

  int reduce(const ir::CallNode& c, const ir::Expr& xe) {
    const auto& a = c.attrs_as<ops::ReduceAttrs>();
    const Shape& xs = ir::shape_of(xe);
    int x = to_plain(value_of(xe), xs);
    if (a.axes.empty()) return x;
    dims_t kd = to_dims(xs);
    for (int64_t ax : a.axes) kd[static_cast<size_t>(ax)] = 1;
    dn::algorithm alg = dn::algorithm::reduction_sum;
    float p = 0.f;
    switch (c.op) {
      case OpCode::ReduceSum: alg = dn::algorithm::reduction_sum; break;
      case OpCode::ReduceMean: alg = dn::algorithm::reduction_mean; break;
      case OpCode::ReduceMax: alg = dn::algorithm::reduction_max; break;
      case OpCode::ReduceMin: alg = dn::algorithm::reduction_min; break;
      case OpCode::ReduceProd: alg = dn::algorithm::reduction_mul; break;
      case OpCode::ReduceL1: alg = dn::algorithm::reduction_norm_lp_sum; p = 1.f; break;
      case OpCode::ReduceL2: alg = dn::algorithm::reduction_norm_lp_sum; p = 2.f; break;
      case OpCode::ReduceSumSquare: alg = dn::algorithm::reduction_norm_lp_power_p_sum; p = 2.f; break;
      default: fail("not a reduction");
    }
    md_t dst = plain_md(kd);
    auto pd = guard([&] {
      return dn::reduction::primitive_desc(dn::reduction::desc(alg, md_of(x), dst, p, 0.f), base_attr(), cpu_engine());
    });
    int out = new_value(dst);
    add_step(pd, dn::reduction(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, out}});
    release(x);
    int res = alias(out, plain_md(c.type->shape));
    release(out);
    return res;
  }

  int strided_slice(const ir::CallNode& c, const ir::Expr& xe) {
    const auto& a = c.attrs_as<ops::StridedSliceAttrs>();
    const Shape& xs = ir::shape_of(xe);
    const Shape& ys = c.type->shape;
    int x = to_plain(value_of(xe), xs);
    dims_t in_st = row_major_strides(to_dims(xs));
    dims_t d = to_dims(ys), st(d.size(), 1);
    int64_t off = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      st[i] = in_st[i] * a.strides[i];
      off += a.begin[i] * in_st[i];
    }
    md_t view_md(d, f32, st);
    view_md.data.offset0 = off;
    int view = alias(x, view_md);
    release(x);
    int out = new_value(plain_md(d));
    auto pd = guard([&] { return dn::reorder::primitive_desc(cpu_engine(), view_md, cpu_engine(), md_of(out), base_attr()); });
    add_step(pd, dn::reorder(pd), {{DNNL_ARG_FROM, view}, {DNNL_ARG_TO, out}});
    release(view);
    return out;
  }

  // Layer normalisation of x over its trailing `norm_rank` axes, with optional scale and shift.
  int layer_norm_of(const ir::Expr& xe, size_t axis, float eps, const ir::Expr* scale, const ir::Expr* shift) {
    const Shape& xs = ir::shape_of(xe);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < xs.size(); ++i) (i < axis ? outer : inner) *= xs[i];
    md_t md = plain_md(dims_t{outer, inner});
    int xp = to_plain(value_of(xe), xs);
    int x = alias(xp, md);
    release(xp);
    auto flags = dn::normalization_flags::none;
    if (scale) flags = flags | dn::normalization_flags::use_scale;
    if (shift) flags = flags | dn::normalization_flags::use_shift;
    auto pd = guard([&] {
      return dn::layer_normalization_forward::primitive_desc(
          dn::layer_normalization_forward::desc(dn::prop_kind::forward_inference, md, eps, flags), base_attr(),
          cpu_engine());
    });
    int out = new_value(md);
    bool t;
    std::vector<std::pair<int, int>> sargs{{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, out}};
    if (scale) sargs.push_back({DNNL_ARG_SCALE, weight(*scale, plain_md(dims_t{inner}), plain_md(dims_t{inner}), &t)});
    if (shift) sargs.push_back({DNNL_ARG_SHIFT, weight(*shift, plain_md(dims_t{inner}), plain_md(dims_t{inner}), &t)});
    std::vector<int> temps;
    if (pd.mean_desc().get_size() > 0) {
      temps.push_back(new_value(pd.mean_desc()));
      sargs.push_back({DNNL_ARG_MEAN, temps.back()});
    }
    if (pd.variance_desc().get_size() > 0) {
      temps.push_back(new_value(pd.variance_desc()));
      sargs.push_back({DNNL_ARG_VARIANCE, temps.back()});
    }
    add_step(pd, dn::layer_normalization_forward(pd), sargs);
    for (int t2 : temps) release(t2);
    release(x);
    int res = alias(out, plain_md(xs));
    release(out);
    return res;
  }

  // Lowers one op call (args already resolved) with post-ops; returns the result value (owned).
  int lower_op(const ir::CallNode& c, const std::vector<ir::Expr>& args, const std::vector<PostOp>& posts) {
    where = short_name(c.op);
    const Shape& ys = ir::is_tensor(c.type) ? c.type->shape : Shape{};
    if (auto steps = eltwise_steps(c)) {
      int x = value_of(args[0]);
      const bool in_place = dies_here(args[0]);
      int v = in_place ? alias(x, md_of(x)) : -1;
      for (size_t i = 0; i < steps->size(); ++i) {
        if (v < 0) v = eltwise(x, (*steps)[i], false);
        else v = eltwise(v, (*steps)[i], true);
      }
      return apply_posts(v, posts, 0, ys);
    }
    if (is_binary_op(c.op)) {
      size_t full = ir::shape_of(args[0]) == ys ? 0 : 1;
      const ir::Expr& ae = args[full];
      const ir::Expr& be = args[1 - full];
      int a = value_of(ae);
      int out = binary(c.op, a, value_of(be), ys, ir::shape_of(be), dies_here(ae) && resolve(ae) != resolve(be));
      return apply_posts(out, posts, 0, ys);
    }
    int out = -1;
    switch (c.op) {
      case OpCode::Conv2d: return conv2d(c, args, posts);
      case OpCode::Dense: return matmul(c, args[0], args[1], true, args.size() > 2 ? &args[2] : nullptr, posts);
      case OpCode::MatMul: return matmul(c, args[0], args[1], false, nullptr, posts);
      case OpCode::BatchNorm: return batch_norm(c, args, posts);
      case OpCode::MaxPool2d: case OpCode::AvgPool2d: case OpCode::GlobalAvgPool2d: case OpCode::GlobalMaxPool2d:
        out = pool(c, args[0]);
        break;
      case OpCode::Softmax: case OpCode::LogSoftmax: out = softmax(c, args[0]); break;
      case OpCode::LayerNorm: out = layer_norm(c, args); break;
      case OpCode::Concat:
        if (args.size() == 1) {
          int x = value_of(args[0]);
          out = alias(x, md_of(x));
        } else {
          out = concat(c, args);
        }
        break;
      case OpCode::Transpose: out = transpose(c, args[0]); break;
      case OpCode::StridedSlice: out = strided_slice(c, args[0]); break;
      case OpCode::ReduceSum: case OpCode::ReduceMean: case OpCode::ReduceMax: case OpCode::ReduceMin:
      case OpCode::ReduceProd: case OpCode::ReduceL1: case OpCode::ReduceL2: case OpCode::ReduceSumSquare:
        out = reduce(c, args[0]);
        break;
      case OpCode::Pow: {
        float p;
        if (!scalar_constant(args[1], &p)) fail("the exponent must be a scalar constant");
        int x = value_of(args[0]);
        EltStep step = p == 2.f ? EltStep{EltAlg::Square, 0.f, 0.f} : EltStep{EltAlg::Pow, 1.f, p};
        if (dies_here(args[0])) out = eltwise(alias(x, md_of(x)), step, true);
        else out = eltwise(x, step, false);
        break;
      }
      case OpCode::Reshape: {
        int x = to_plain(value_of(args[0]), ir::shape_of(args[0]));
        out = alias(x, plain_md(ys));
        release(x);
        break;
      }
      case OpCode::Identity: case OpCode::Pad: case OpCode::Cast: {
        int x = value_of(args[0]);
        out = alias(x, md_of(x));
        break;
      }
      default: {
        std::string r = check_op(c);
        fail(r.empty() ? "no lowering for this op" : r);
      }
    }
    return apply_posts(out, posts, 0, ys);
  }

  // ---------------------------------------------------------------- composites
  // Splits a composite body into anchor + post-op chain (activations and binary ops whose other
  // operand is not computed inside the composite). Returns false when the body has another form.
  bool parse_chain(const ir::FunctionNode& f, const ir::CallNode** anchor, std::vector<PostOp>& posts) {
    ir::Expr node = f.body;
    std::vector<PostOp> rev;
    while (true) {
      auto* c = node->as<ir::CallNode>();
      if (!c || !c->is_op()) return false;
      if (c->op == OpCode::Conv2d || c->op == OpCode::Dense || c->op == OpCode::MatMul ||
          c->op == OpCode::BatchNorm) {
        *anchor = c;
        break;
      }
      if (auto steps = eltwise_steps(*c); steps && c->args.size() == 1) {
        PostOp p;
        p.elts = *steps;
        rev.push_back(p);
        node = c->args[0];
        continue;
      }
      // x * sigmoid(x) (SiLU, EfficientNet's activation): one swish step, x*sigmoid(1*x).
      if (const ir::Expr* x = pattern::silu_operand(*c)) {
        PostOp p;
        p.elts = {{EltAlg::Swish, 1.f, 0.f}};
        rev.push_back(p);
        node = *x;
        continue;
      }
      if (is_binary_op(c->op)) {
        auto computed = [](const ir::Expr& e) { return e->kind == ir::ExprKind::Call; };
        int chain = computed(c->args[0]) ? 0 : 1;
        if (computed(c->args[0]) == computed(c->args[1])) return false;
        if (chain == 1 && !(c->op == OpCode::Add || c->op == OpCode::Mul || c->op == OpCode::Maximum ||
                            c->op == OpCode::Minimum))
          return false;
        if (ir::shape_of(c->args[static_cast<size_t>(chain)]) != c->type->shape) return false;
        PostOp p;
        p.is_binary = true;
        p.op = c->op;
        p.operand = resolve(c->args[static_cast<size_t>(1 - chain)]);
        rev.push_back(p);
        node = c->args[static_cast<size_t>(chain)];
        continue;
      }
      return false;
    }
    posts.assign(rev.rbegin(), rev.rend());
    return true;
  }

  int lower_composite(const ir::CallNode& call, const ir::FunctionNode& f) {
    SY_CHECK(f.params.size() == call.args.size()) << "composite arity";
    for (size_t i = 0; i < f.params.size(); ++i) binding[f.params[i].get()] = resolve(call.args[i]);
    const ir::CallNode* anchor = nullptr;
    std::vector<PostOp> posts;
    int out;
    const auto name_it = f.attrs.find("Composite");
    const std::string name = name_it == f.attrs.end() ? "" : name_it->second;
    if (name == "onednn.gelu_erf" || name == "onednn.layer_norm") return lower_written_out(name, f);
    // Interior nodes of a chain are used once each, inside the chain (the rewriter guarantees it).
    if (parse_chain(f, &anchor, posts)) {
      std::vector<ir::Expr> args;
      for (const ir::Expr& a : anchor->args) args.push_back(resolve(a));
      out = lower_op(*anchor, args, posts);
    } else {
      count_uses(f.body);
      std::unordered_set<const ir::ExprNode*> scope;
      const std::vector<ir::Expr> order = ir::post_order(f.body);
      for (const ir::Expr& e : order)
        if (e->kind == ir::ExprKind::Call) scope.insert(e.get());
      inner_scope = &scope;
      for (const ir::Expr& e : order) {
        if (e->kind != ir::ExprKind::Call) continue;
        auto* c = e->as<ir::CallNode>();
        if (!c->is_op()) fail("nested function call inside a composite");
        std::vector<ir::Expr> args;
        for (const ir::Expr& a : c->args) args.push_back(resolve(a));
        expr_val[e.get()] = lower_op(*c, args, {});
        for (const ir::Expr& a : c->args)
          if (a->kind != ir::ExprKind::Var) consume(a);
      }
      inner_scope = nullptr;
      if (f.body->kind == ir::ExprKind::Call) {
        out = expr_val.at(f.body.get());  // the root's reference moves to the composite's result
      } else {
        int v = value_of(f.body);
        out = alias(v, md_of(v));
      }
    }
    return out;
  }

  // Composites whose body writes out what one oneDNN primitive computes (checked by the rules).
  int lower_written_out(const std::string& name, const ir::FunctionNode& f) {
    const std::vector<ir::Expr> order = ir::post_order(f.body);
    auto find = [&](OpCode op) -> const ir::CallNode* {
      for (const ir::Expr& e : order)
        if (auto* c = as_op(e, op)) return c;
      fail("composite " + name + " without " + short_name(op));
    };
    if (name == "onednn.gelu_erf") {
      const ir::Expr x = resolve(find(OpCode::Div)->args[0]);
      int xv = value_of(x);
      if (dies_here(x)) return eltwise(alias(xv, md_of(xv)), {EltAlg::GeluErf}, true);
      return eltwise(xv, {EltAlg::GeluErf}, false);
    }
    const ir::CallNode* sub = find(OpCode::Sub);
    const ir::CallNode* mean = as_op(sub->args[1], OpCode::ReduceMean);
    SY_CHECK(mean) << "layer_norm composite without its mean";
    const ir::Expr x = resolve(sub->args[0]);
    const size_t axis = ir::shape_of(x).size() - mean->attrs_as<ops::ReduceAttrs>().axes.size();
    float eps = 0.f;
    const ir::Expr* scale = nullptr;
    const ir::Expr* shift = nullptr;
    std::vector<ir::Expr> consts;
    consts.reserve(4);
    for (const ir::Expr& e : order) {
      auto* c = e->as<ir::CallNode>();
      if (!c || !c->is_op()) continue;
      if (c->op == OpCode::Add && as_op(c->args[0], OpCode::ReduceMean)) {
        if (!scalar_constant(resolve(c->args[1]), &eps)) fail("epsilon is not a scalar constant");
      } else if (c->op == OpCode::Mul) {
        consts.push_back(resolve(c->args[1]));
        scale = &consts.back();
      } else if (c->op == OpCode::Add) {
        consts.push_back(resolve(c->args[1]));
        shift = &consts.back();
      }
    }
    return layer_norm_of(x, axis, eps, scale, shift);
  }

  // ---------------------------------------------------------------- whole function
  void build() {
    fn = fn_expr->as<ir::FunctionNode>();
    SY_CHECK(fn) << "onednn: external function " << symbol << " is not a function";
    for (size_t i = 0; i < fn->params.size(); ++i) {
      const ir::Expr& p = fn->params[i];
      if (!ir::is_tensor(p->type)) throw Error("onednn region " + symbol + ": parameter " + std::to_string(i) + " is not a tensor");
      if (ir::dtype_of(p) != DType::f32)
        throw Error("onednn region " + symbol + ": parameter " + std::to_string(i) + " has dtype " +
                    std::string(dtype_name(ir::dtype_of(p))) + " (float32 only)");
      Buffer b;
      b.kind = Buffer::Input;
      b.index = static_cast<int>(i);
      b.bytes = ir::tensor_of(p).shape.empty() ? 4 : static_cast<size_t>(shape_numel(ir::shape_of(p))) * 4;
      int buf = add_buffer(std::move(b));
      expr_val[p.get()] = add_value(plain_md(ir::shape_of(p)), buf);
    }
    count_uses(fn->body);
    std::vector<ir::Expr> outs;
    flatten_result(fn->body, outs);
    for (const ir::Expr& o : outs) uses[resolve(o).get()]++;  // kept alive for the output copies
    find_weight_scales();

    for (const ir::Expr& e : ir::post_order(fn->body)) {
      auto* c = e->as<ir::CallNode>();
      if (!c) continue;
      std::vector<ir::Expr> args;
      for (const ir::Expr& a : c->args) args.push_back(resolve(a));
      if (auto ws = weight_scales.find(e.get()); ws != weight_scales.end()) {
        // Stands for x * s until the convolution reads x and takes s into its weights.
        int x = value_of(ws->second.x);
        expr_val[e.get()] = alias(x, md_of(x));
        ws->second.s_value = to_plain(value_of(ws->second.s), ir::shape_of(ws->second.s));
      } else if (c->is_op()) {
        expr_val[e.get()] = lower_op(*c, args, {});
      } else {
        auto* f = c->callee->as<ir::FunctionNode>();
        if (!f) throw Error("onednn region " + symbol + ": call of a global function inside the region");
        where = f->attrs.count("Composite") ? f->attrs.at("Composite") : "function";
        expr_val[e.get()] = lower_composite(*c, *f);
      }
      for (const ir::Expr& a : c->args) consume(a);
    }
    where = "outputs";
    for (size_t k = 0; k < outs.size(); ++k) {
      const ir::Expr& o = outs[k];
      if (!ir::is_tensor(o->type) || ir::dtype_of(o) != DType::f32)
        throw Error("onednn region " + symbol + ": output " + std::to_string(k) + " is not a float32 tensor");
      Buffer b;
      b.kind = Buffer::Output;
      b.index = static_cast<int>(k);
      b.bytes = static_cast<size_t>(shape_numel(ir::shape_of(o))) * 4;
      int out = add_value(plain_md(ir::shape_of(o)), add_buffer(std::move(b)));
      int v = value_of(o);
      auto pd = guard([&] { return dn::reorder::primitive_desc(cpu_engine(), md_of(v), cpu_engine(), md_of(out), base_attr()); });
      add_step(pd, dn::reorder(pd), {{DNNL_ARG_FROM, v}, {DNNL_ARG_TO, out}});
      output_types.push_back(o->type);
    }
    finalize(outs.size());
  }

  // Squeeze-and-excitation: y = x * s, s of shape [1, C, 1, 1], then a convolution of y. As the
  // convolution is linear in each input channel, conv(x * s, w) = conv(x, w * s) with w scaled
  // along its input channels: a pass over the C*H*W activations becomes one over the weights. Taken
  // where the weights are at most a quarter of the activations (EfficientNet-B0's first five
  // blocks: 0.28 of its 0.34 ms of multiplies, 2 threads) and the convolution is the multiply's
  // only reader, not grouped, and its weights constant.
  void find_weight_scales() {
    for (const ir::Expr& e : ir::post_order(fn->body)) {
      auto* u = e->as<ir::CallNode>();
      auto* f = u && !u->is_op() && u->callee ? u->callee->as<ir::FunctionNode>() : nullptr;
      const ir::CallNode* conv = nullptr;
      std::vector<PostOp> posts;
      if (!f || !parse_chain(*f, &conv, posts) || conv->op != OpCode::Conv2d ||
          conv->attrs_as<ops::Conv2dAttrs>().groups != 1)
        continue;
      auto outer = [&](const ir::Expr& inner) -> ir::Expr {
        for (size_t i = 0; i < f->params.size(); ++i)
          if (f->params[i].get() == inner.get()) return resolve(u->args[i]);
        return ir::Expr();
      };
      int reads = 0;  // of the convolution's input parameter inside the composite
      for (const ir::Expr& n : ir::post_order(f->body))
        for (const ir::Expr& in : ir::node_inputs(n)) reads += in.get() == conv->args[0].get();
      const ir::Expr y = outer(conv->args[0]), w = outer(conv->args[1]);
      auto* m = y ? y->as<ir::CallNode>() : nullptr;
      if (reads != 1 || !w || w->kind != ir::ExprKind::Constant || !m || !m->is_op() ||
          m->op != OpCode::Mul || uses[y.get()] != 1 || ir::dtype_of(y) != DType::f32)
        continue;
      const Shape& ys = m->type->shape;
      for (size_t k = 0; k < 2; ++k) {
        const ir::Expr x = resolve(m->args[k]), sc = resolve(m->args[1 - k]);
        const Shape& ss = ir::shape_of(sc);
        if (ys.size() == 4 && ir::shape_of(x) == ys && ss == Shape{1, ys[1], 1, 1} &&
            4 * shape_numel(ir::shape_of(w)) <= shape_numel(ys)) {
          weight_scales[y.get()] = {x, sc};
          break;
        }
      }
    }
  }

  void flatten_result(const ir::Expr& e0, std::vector<ir::Expr>& out) {
    ir::Expr e = resolve(e0);
    if (auto* t = e->as<ir::TupleNode>()) {
      for (const ir::Expr& f : t->fields) flatten_result(f, out);
      return;
    }
    if (auto* g = e->as<ir::TupleGetItemNode>()) {
      if (auto* t = resolve(g->tuple)->as<ir::TupleNode>()) {
        flatten_result(t->fields[static_cast<size_t>(g->index)], out);
        return;
      }
    }
    out.push_back(e);
  }

  void finalize(size_t n_outputs) {
    // One arena for the intermediates.
    size_t total = 0;
    std::vector<size_t> offset(bufs.size(), 0);
    for (size_t i = 0; i < bufs.size(); ++i)
      if (bufs[i].kind == Buffer::Internal) {
        offset[i] = total;
        total += round_up(bufs[i].bytes);
      }
    stats.arena_bytes = total;
    arena = Tensor(DType::u8, {static_cast<int64_t>(std::max<size_t>(total, 64))});
    auto* base = static_cast<uint8_t*>(arena.raw());
    input_values.assign(fn->params.size(), {});
    output_values.assign(n_outputs, {});
    for (size_t v = 0; v < vals.size(); ++v) {
      const Buffer& b = bufs[static_cast<size_t>(vals[v].buf)];
      void* ptr = nullptr;
      switch (b.kind) {
        case Buffer::Internal: ptr = base + offset[static_cast<size_t>(vals[v].buf)]; break;
        case Buffer::Const: ptr = const_cast<void*>(b.tensor.raw()); break;
        case Buffer::Input: input_values[static_cast<size_t>(b.index)].push_back(static_cast<int>(v)); break;
        case Buffer::Output: output_values[static_cast<size_t>(b.index)].push_back(static_cast<int>(v)); break;
      }
      mems.emplace_back(vals[v].md, cpu_engine(), ptr);
    }
    if (scratch_bytes > 0) scratch_tensor.push_back(Tensor(DType::u8, {static_cast<int64_t>(round_up(scratch_bytes))}));
    for (Step& s : steps) {
      for (auto& [arg, v] : s.args) s.bound[arg] = mems[static_cast<size_t>(v)];
      for (auto& [arg, v] : s.args) s.bound_in_order.push_back(mems[static_cast<size_t>(v)]);
      if (s.scratch)
        s.bound[DNNL_ARG_SCRATCHPAD] =
            dn::memory(md_t(dims_t{static_cast<int64_t>(scratch_bytes)}, dn::memory::data_type::u8, tag::a),
                       cpu_engine(), scratch_tensor[0].raw());
    }
    // Build-time state is no longer needed.
    binding.clear();
    expr_val.clear();
    uses.clear();
    weight_cache.clear();
    own_concats.clear();
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    if (inputs.size() != fn->params.size())
      throw Error("onednn region " + symbol + ": expected " + std::to_string(fn->params.size()) + " inputs, got " +
                  std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ir::TypeNode& t = ir::tensor_of(fn->params[i]);
      if (!inputs[i].defined() || inputs[i].dtype() != t.dtype || inputs[i].shape() != t.shape)
        throw Error("onednn region " + symbol + ": input " + std::to_string(i) + " must be " +
                    ir::type_str(fn->params[i]->type) + ", got " +
                    (inputs[i].defined() ? std::string(dtype_name(inputs[i].dtype())) + shape_str(inputs[i].shape())
                                         : std::string("no tensor")));
      for (int v : input_values[i]) mems[static_cast<size_t>(v)].set_data_handle(const_cast<void*>(inputs[i].raw()));
    }
    std::vector<Tensor> outs;
    for (size_t k = 0; k < output_values.size(); ++k) {
      outs.emplace_back(DType::f32, ir::as_tensor(output_types[k]).shape);
      for (int v : output_values[k]) mems[static_cast<size_t>(v)].set_data_handle(outs.back().raw());
    }
    for (Step& s : steps) {
      if (s.own) {
        s.own(s.bound_in_order);
      } else if (s.one_thread) {
        const int n = omp_get_max_threads();
        omp_set_num_threads(1);
        s.prim.execute(stream, s.bound);
        omp_set_num_threads(n);
      } else {
        s.prim.execute(stream, s.bound);
      }
    }
    stream.wait();
    return outs;
  }
};

Plan::Plan(const std::string& symbol, const ir::Expr& function, std::shared_ptr<WeightStore> weights)
    : impl_(std::make_unique<Impl>()) {
  impl_->symbol = symbol;
  impl_->fn_expr = function;
  impl_->store = weights ? std::move(weights) : make_weight_store();
  impl_->build();
}
Plan::~Plan() = default;
std::vector<Tensor> Plan::run(const std::vector<Tensor>& inputs) { return impl_->run(inputs); }
const PlanStats& Plan::stats() const { return impl_->stats; }

std::string broadcast_binary_reference(OpCode op, const Shape& out, const Shape& b) {
  // The layouts the operand can have here: plain, and the one a convolution producing it would
  // choose on this CPU (channel blocks of 16 with AVX-512, 8 with AVX2).
  const dims_t od = to_dims(out), bd = pad_dims(b, od.size());
  std::vector<std::pair<std::string, md_t>> layouts = {{"plain", plain_md(od)}};
  if (od.size() == 4) {
    try {
      const dims_t wd = {od[1], od[1], 1, 1};
      dn::convolution_forward::primitive_desc conv(
          dn::convolution_forward::desc(dn::prop_kind::forward_inference, dn::algorithm::convolution_direct,
                                        any_md(od), any_md(wd), any_md(od), {1, 1}, {0, 0}, {0, 0}),
          cpu_engine());
      std::string name = "a convolution's layout";
      for (const auto& [n, t] : layouts_of_rank(4))
        if (md_t(od, f32, t) == conv.dst_desc()) name = n;
      layouts.emplace_back(name, conv.dst_desc());
    } catch (const dn::error&) {
    }
  }
  for (const auto& [name, amd] : layouts) {
    bool reference = false;
    broadcast_layout(binary_alg(op), amd, bd, &reference);
    if (reference) {
      std::string bs;
      for (size_t i = 0; i < bd.size(); ++i) {
        if (i) bs += 'x';
        bs += std::to_string(bd[i]);
      }
      return "broadcast " + bs + " on " + name + " runs oneDNN's reference kernel";
    }
  }
  return "";
}

}  // namespace sy::backends::onednn
