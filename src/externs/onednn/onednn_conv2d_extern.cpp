// conv2d through oneDNN as extern implementations: the primitive is made once per call site (at
// load) and the weight reordered once into the primitive's layout. Activations stay NCHW, the
// layout of the neighbouring native kernels: conv2d.onednn hands oneDNN NCHW as it is (oneDNN
// picks its best implementation for it); conv2d.onednn_blocked reorders the input to oneDNN's
// preferred layout and the result back inside the call, which pays for itself only when that
// convolution is enough faster (the tuner measures both). Between two calls of conv2d.onednn_blocked
// the value stays in oneDNN's channel-blocked layout (native/kept_layouts.h): neither reorders.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "codegen/c/c_generator.h"
#include "externs/onednn/onednn_extern_util.h"
#include "externs/onednn/onednn_externs.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "strategy/externs.h"
#include "strategy/strategy.h"
#include "support/error.h"
#include "te/tensor.h"

namespace sy::externs::onednn {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

// attrs: stride h w, pad top left bottom right, dilation h w, groups, weight block (0: plain
// [O, C/G, KH, KW] weight), the activations' layout (0: as the buffers' ranks say, NCHW or
// nChw<B>c; 1: NCHW buffers reordered inside the call to the layout oneDNN picks; 2: the blocked
// buffers are NHWC, [N, 1, H, W, C]), bias (0/1), the number of post-ops, the channel block of the
// buffers kept in oneDNN's blocked layout (nChw<B>c, though the buffer's rank says NCHW; 0: none)
// and which (1: the input, 2: the result, 4: the added tensors), then
// three per post-op in the order they apply: kind and its two operands (relu: -; clip: the
// bounds' float bits; add: the buffer added, of the result's shape; sum, first only: the buffer
// added, which the result's buffer holds before the primitive accumulates onto it: copied there
// unless it already is, i.e. planned in place).
enum Attr { kSh, kSw, kPt, kPl, kPb, kPr, kDh, kDw, kGroups, kBlock, kBlocked, kHasBias, kNumPosts, kKeptBlock, kKept, kNumAttrs };
constexpr int64_t kKeptSrc = 1, kKeptDst = 2, kKeptAdded = 4;
enum PostKind : int64_t { kPostRelu = 1, kPostClip = 2, kPostAdd = 3, kPostSum = 4, kPostSilu = 5 };
struct Post {
  int64_t kind = 0, a = 0, b = 0;
};

// Infinite bounds stay infinite (ONNX Clip with one bound); finite ones beyond float saturate.
int64_t float_bits(double v) {
  const float f = std::isinf(v) ? static_cast<float>(v) : v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : static_cast<float>(v);
  return std::bit_cast<int32_t>(f);
}
float bits_float(int64_t v) {
  return std::bit_cast<float>(static_cast<int32_t>(v));
}

// A convolution's weight [O, C/G, KH, KW] as oneDNN describes it: grouped convolutions
// [G, O/G, C/G, KH, KW].
memory::desc weight_desc(int64_t O, int64_t CperG, int64_t KH, int64_t KW, int64_t G, tag t) {
  const memory::dims w = G > 1 ? memory::dims{G, O / G, CperG, KH, KW} : memory::dims{O, CperG, KH, KW};
  return memory::desc(w, memory::data_type::f32, t);
}

// What one thread count needs.
struct ConvPrims {
  dnnl::convolution_forward prim;
  memory::desc src, dst, wei, scratch;
  Reorder src_in, dst_out, wei_in;        // user layout -> the primitive's, and back
  dnnl::memory weights;                   // a constant weight in the primitive's layout
};

struct Conv {
  memory::desc src_user, dst_user, wei_user, bias;
  memory::dims strides, dil, pad_l, pad_r;
  bool has_bias = false, blocked = false, nhwc = false, src_kept = false, dst_kept = false;
  int out = 0;  // the output's buffer: after x, w, [bias] and the added tensors
  std::vector<Post> posts;
  ConstantWeights constant_weight;  // when the weight is a model constant
  PerThreads<ConvPrims> prims;
  PerCaller callers;

  ConvPrims make() const {
    ConvPrims p;
    const auto any = [](const memory::desc& d) { return memory::desc(d.dims(), memory::data_type::f32, tag::any); };
    const memory::desc src = blocked && !src_kept ? any(src_user) : src_user;
    const memory::desc dst = blocked && !dst_kept ? any(dst_user) : dst_user;
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc d =
        has_bias ? dnnl::convolution_forward::desc(kind, alg, src, any(wei_user), bias, dst, strides, dil, pad_l, pad_r)
                 : dnnl::convolution_forward::desc(kind, alg, src, any(wei_user), dst, strides, dil, pad_l, pad_r);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per run: concurrent runs share nothing
    dnnl::post_ops po;
    for (const Post& p : posts) {
      if (p.kind == kPostRelu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      if (p.kind == kPostClip) po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, bits_float(p.a), bits_float(p.b));
      if (p.kind == kPostAdd) po.append_binary(dnnl::algorithm::binary_add, dst_user);
      if (p.kind == kPostSum) po.append_sum(1.f);
      if (p.kind == kPostSilu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);  // x * sigmoid(1 * x)
    }
    attr.set_post_ops(po);
    dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine());
    p.prim = dnnl::convolution_forward(pd);
    p.src = pd.src_desc();
    p.dst = pd.dst_desc();
    p.wei = pd.weights_desc();
    p.scratch = pd.scratchpad_desc();
    if (p.src != src_user) p.src_in = make_reorder(src_user, p.src);
    if (p.dst != dst_user) p.dst_out = make_reorder(p.dst, dst_user);
    if (constant_weight.constant())
      p.weights = constant_weight.in(p.wei);
    else
      p.wei_in = make_reorder(wei_user, p.wei);  // a weight computed at run time, reordered per call
    return p;
  }
};

void* conv_init(const sy_extern_site* s, char* err, size_t err_size) {
  return init_or_explain(err, err_size, [&]() -> void* {
    if (s->num_attrs < kNumAttrs || s->attrs[kNumPosts] < 0 || s->attrs[kNumPosts] > 16 ||
        s->num_attrs != kNumAttrs + 3 * s->attrs[kNumPosts])
      throw std::runtime_error("conv2d: unexpected attributes");
    int adds = 0;
    for (int64_t i = 0; i < s->attrs[kNumPosts]; ++i)
      adds += s->attrs[kNumAttrs + 3 * i] == kPostAdd || s->attrs[kNumAttrs + 3 * i] == kPostSum;
    const int want = 3 + static_cast<int>(s->attrs[kHasBias] != 0) + adds;
    check_site(*s, want, want, s->num_attrs, "conv2d");
    const int out = s->num_buffers - 1;
    if ((s->ranks[0] != 4 && s->ranks[0] != 5) || (s->ranks[out] != 4 && s->ranks[out] != 5) ||
        (s->ranks[1] != 4 && s->ranks[1] != 5))
      throw std::runtime_error("conv2d: expected NCHW (or channel-blocked) data and a 4-d (or packed 5-d) weight");
    const int64_t* a = s->attrs;
    auto c = std::make_unique<Conv>();
    c->has_bias = a[kHasBias] != 0;
    if (a[kBlocked] < 0 || a[kBlocked] > 2) throw std::runtime_error("conv2d: an unknown layout");
    c->blocked = a[kBlocked] == 1;
    c->nhwc = a[kBlocked] == 2;
    c->out = out;
    const int64_t kept = a[kKeptBlock] != 0 ? a[kKept] : 0;
    if (kept < 0 || kept > 7 || ((kept & kKeptAdded) && !(kept & kKeptDst)) || (kept && !c->blocked))
      throw std::runtime_error("conv2d: a malformed kept layout");
    c->src_kept = kept & kKeptSrc;
    c->dst_kept = kept & kKeptDst;
    for (int64_t i = 0; i < a[kNumPosts]; ++i) {
      Post p{a[kNumAttrs + 3 * i], a[kNumAttrs + 3 * i + 1], a[kNumAttrs + 3 * i + 2]};
      const bool adds_buffer = p.kind == kPostAdd || p.kind == kPostSum;
      if (p.kind < kPostRelu || p.kind > kPostSilu ||
          (adds_buffer && ((c->blocked && !(kept & kKeptAdded)) || p.a < 2 + (c->has_bias ? 1 : 0) || p.a >= out)) ||
          (p.kind == kPostSum && i != 0))
        throw std::runtime_error("conv2d: a malformed post-op");
      if (adds_buffer && dims_of(*s, static_cast<int>(p.a)) != dims_of(*s, out))
        throw std::runtime_error("conv2d: an added tensor of another shape or layout than the result");
      c->posts.push_back(p);
    }
    const memory::dims x = logical_dims(*s, 0), y = logical_dims(*s, out);
    const int64_t G = a[kGroups], O = y[1], C = x[1], KH = s->shapes[1][2], KW = s->shapes[1][3];
    if (G < 1 || C % G || O % G) throw std::runtime_error("conv2d: channels not divisible by the groups");
    try {
      c->src_user = c->src_kept ? activation_desc(x, a[kKeptBlock]) : activation_desc(*s, 0, c->nhwc);
      c->dst_user = c->dst_kept ? activation_desc(y, a[kKeptBlock]) : activation_desc(*s, out, c->nhwc);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("conv2d: ") + e.what());
    }
    // A kept buffer is sized as the plain tensor: only whole blocks of channels fit it.
    const int64_t B = a[kKeptBlock] > 0 ? a[kKeptBlock] : 1;  // NHWC: any channels
    if ((c->src_kept && (s->ranks[0] != 4 || x[1] % B)) || (c->dst_kept && (s->ranks[out] != 4 || y[1] % B)))
      throw std::runtime_error("conv2d: a kept layout of a partial block of channels");
    if (c->blocked && (s->ranks[0] == 5 || s->ranks[out] == 5))
      throw std::runtime_error("conv2d: the blocked variant takes NCHW data");
    c->wei_user = weight_desc(O, C / G, KH, KW, G, G > 1 ? tag::goihw : tag::oihw);
    if (c->has_bias) c->bias = memory::desc({O}, memory::data_type::f32, tag::a);
    c->strides = {a[kSh], a[kSw]};
    c->dil = {a[kDh] - 1, a[kDw] - 1};  // oneDNN counts the gaps, ONNX the step
    c->pad_l = {a[kPt], a[kPl]};
    c->pad_r = {a[kPb], a[kPr]};
    if (const void* wc = s->constants[1]) {
      const float* wf = static_cast<const float*>(wc);
      c->constant_weight.hold_plain(c->wei_user, a[kBlock] > 0 ? unpack_rows(wf, O, (C / G) * KH * KW, a[kBlock])
                                                               : std::vector<float>(wf, wf + O * (C / G) * KH * KW));
    } else if (a[kBlock] > 0) {
      throw std::runtime_error("conv2d: a packed weight must be a constant");
    }
    c->prims.get([&] { return c->make(); });  // the primitive for the current thread count, now
    c->constant_weight.release_plain();
    return c.release();
  });
}

int32_t conv_run(void* state, void* const* b) {
  const Conv& c = *static_cast<const Conv*>(state);
  try {
    const ConvPrims& p = c.prims.get([&] { return c.make(); });
    BoundArgs& r = c.callers.get(&p, [&] {
      std::unordered_map<int, memory> a{{DNNL_ARG_SRC, unbound(p.src)},
                                        {DNNL_ARG_WEIGHTS, c.constant_weight.constant() ? p.weights : unbound(p.wei)},
                                        {DNNL_ARG_DST, unbound(p.dst)},
                                        {DNNL_ARG_SCRATCHPAD, unbound(p.scratch)}};
      if (c.has_bias) a.emplace(DNNL_ARG_BIAS, unbound(c.bias));
      for (size_t i = 0; i < c.posts.size(); ++i)
        if (c.posts[i].kind == kPostAdd)
          a.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1, unbound(c.dst_user));
      return a;
    });
    dnnl::engine& e = cpu_engine();
    if (p.src_in) {
      r.set(DNNL_ARG_SRC, run_buffer(kSrc, p.src.get_size()));
      memory src_user(c.src_user, e, b[0]);
      run_reorder(p.src_in, r.stream, src_user, r[DNNL_ARG_SRC]);
    } else {
      r.set(DNNL_ARG_SRC, b[0]);
    }
    r.set(DNNL_ARG_DST, p.dst_out ? run_buffer(kDst, p.dst.get_size()) : b[c.out]);
    if (!c.constant_weight.constant()) {  // a weight computed at run time: reordered per call
      r.set(DNNL_ARG_WEIGHTS, run_buffer(kWeights, p.wei.get_size()));
      memory user(c.wei_user, e, b[1]);
      run_reorder(p.wei_in, r.stream, user, r[DNNL_ARG_WEIGHTS]);
    }
    r.set(DNNL_ARG_SCRATCHPAD, run_buffer(kScratchpad, p.scratch.get_size()));
    if (c.has_bias) r.set(DNNL_ARG_BIAS, b[2]);
    for (const Post& post : c.posts)
      if (post.kind == kPostSum && b[post.a] != b[c.out]) {  // not planned in place
        SY_CHECK(!p.dst_out) << "a sum post-op on a reordered result";
        std::memcpy(b[c.out], b[post.a], c.dst_user.get_size());
      }
    for (size_t i = 0; i < c.posts.size(); ++i)
      if (c.posts[i].kind == kPostAdd) r.set(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1, b[c.posts[i].a]);
    p.prim.execute(r.stream, r.args);
    if (p.dst_out) {
      memory dst_user(c.dst_user, e, b[c.out]);
      run_reorder(p.dst_out, r.stream, r[DNNL_ARG_DST], dst_user);
    }
    r.stream.wait();
  } catch (const std::exception&) {
    return codegen::kFaultExtern;
  }
  return 0;
}

void conv_destroy(void* state) { delete static_cast<Conv*>(state); }

std::string why_not_conv(const ir::CallNode& c) {
  const ir::TypeNode& x = ir::as_tensor(c.args.at(0)->type);
  const ir::TypeNode& w = ir::as_tensor(c.args.at(1)->type);
  const ir::TypeNode& y = ir::as_tensor(c.type);
  if (x.dtype != DType::f32 || w.dtype != DType::f32) return "not f32";
  if (x.shape.size() != 4) return "not a 2-d convolution over NCHW";
  if (shape_numel(x.shape) == 0 || shape_numel(y.shape) == 0) return "an empty tensor";
  if (w.shape.size() != 4 && w.shape.size() != 5) return "unexpected weight rank";
  return "";
}

// The conv call's extern stage; `in` are its arguments' tensors then those of the add post-ops.
te::Tensor conv_stage(const ir::CallNode& c, const std::vector<te::Tensor>& in, bool blocked, const std::vector<Post>& posts,
                      const Shape& out, int64_t kept_block = 0, int64_t kept = 0) {
  const auto& a = c.attrs_as<ops::Conv2dAttrs>();
  const ir::TypeNode& w = ir::as_tensor(c.args.at(1)->type);
  const int64_t block = w.shape.size() == 5 ? w.shape[4] : 0;
  std::vector<int64_t> attrs = {a.strides[0], a.strides[1], a.padding[0], a.padding[1],   a.padding[2],
                                a.padding[3], a.dilation[0], a.dilation[1], a.groups,      block,
                                blocked ? 1 : 0, c.args.size() > 2 ? 1 : 0, static_cast<int64_t>(posts.size()),
                                kept_block, kept};
  for (const Post& p : posts) attrs.insert(attrs.end(), {p.kind, p.a, p.b});
  return te::stateful_extern_op(blocked ? "conv2d_onednn_blocked" : "conv2d_onednn", out, DType::f32, in,
                                "sy_onednn_conv2d", attrs);
}

std::vector<te::Tensor> conv_compute(const ir::CallNode& c, const std::vector<te::Tensor>& in, bool blocked) {
  return {conv_stage(c, in, blocked, {}, ir::as_tensor(c.type).shape)};
}

// A fused function that is one conv -> [add(, residual)] -> [relu | clip] ... chain, every op
// after the conv one oneDNN applies as a post-op.
struct Chain {
  const ir::CallNode* anchor = nullptr;
  std::vector<Post> posts;  // in the order they apply; an add's operand index is set by conv_group
  std::vector<int> added;   // the parameter each add post-op adds, in that order
  std::vector<int> args;    // the parameter of each of the conv's arguments
};

std::optional<Chain> chain_of(const ir::FunctionNode& fn, bool adds) {
  Chain ch;
  ch.anchor = strategy::anchor_of(fn);
  if (!ch.anchor || ch.anchor->op != ops::OpCode::Conv2d) return std::nullopt;
  const Shape& out = ir::as_tensor(ch.anchor->type).shape;
  auto param_of = [&](const ir::Expr& x) {
    for (size_t i = 0; i < fn.params.size(); ++i)
      if (fn.params[i].get() == x.get()) return static_cast<int>(i);
    return -1;
  };
  auto same_type = [&](const ir::Expr& x) {
    return ir::is_tensor(x->type) && ir::as_tensor(x->type).shape == out && ir::as_tensor(x->type).dtype == DType::f32;
  };
  const ir::Expr* e = &fn.body;
  for (;;) {
    const ir::CallNode* c = (*e)->as<ir::CallNode>();
    if (!c || !c->is_op() || !same_type(*e)) return std::nullopt;
    if (c == ch.anchor) break;
    if (c->op == ops::OpCode::Relu) {
      ch.posts.push_back({kPostRelu, 0, 0});
      e = &c->args[0];
    } else if (c->op == ops::OpCode::Clip) {
      const auto& a = c->attrs_as<ops::ClipAttrs>();
      ch.posts.push_back({kPostClip, float_bits(a.min), float_bits(a.max)});
      e = &c->args[0];
    } else if (c->op == ops::OpCode::Add && adds) {
      const int k = param_of(c->args[1]) >= 0 && same_type(c->args[1]) ? 0 : param_of(c->args[0]) >= 0 && same_type(c->args[0]) ? 1 : -1;
      if (k < 0) return std::nullopt;
      ch.added.push_back(param_of(c->args[1 - k]));
      ch.posts.push_back({kPostAdd, 0, 0});
      e = &c->args[static_cast<size_t>(k)];
    } else {
      return std::nullopt;
    }
  }
  for (const ir::Expr& a : ch.anchor->args) {
    ch.args.push_back(param_of(a));
    if (ch.args.back() < 0) return std::nullopt;
  }
  std::reverse(ch.posts.begin(), ch.posts.end());
  std::reverse(ch.added.begin(), ch.added.end());
  return ch;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// "nChw16c" -> 16, "nhwc" -> kNhwcBlock; 0 for anything else.
int64_t block_of(const std::string& layout) {
  if (layout == "nhwc") return kNhwcBlock;
  const int64_t b = topi::blocked_layout_block(layout);
  return b == 8 || b == 16 ? b : 0;
}

// The group as one call with post-ops (see chain_of). The blocked variant takes adds only when
// its result and the added tensors are kept in the blocked layout (fn's KeptLayout): with the
// result reordered back to NCHW, the added tensor would be in another layout than the
// primitive's result. NaN: oneDNN's relu and clip post-ops map NaN to 0 or to the lower bound
// where the native ops keep it, as the oneDNN backend's fused post-ops do; finite inputs agree.
std::optional<std::vector<te::Tensor>> conv_group(const ir::FunctionNode& fn, const std::vector<te::Tensor>& params,
                                                  bool blocked) {
  const std::optional<topi::KeptLayout> k = topi::kept_layout_of(fn);
  const bool dst_kept = k && k->result;
  std::optional<Chain> ch = chain_of(fn, !blocked || dst_kept);
  if (k && (!blocked || !ch || block_of(k->layout) == 0))
    throw Error("conv2d." + std::string(blocked ? "onednn_blocked" : "onednn") + ": cannot keep '" +
                topi::kept_layout_str(*k) + "' for this group");
  if (!ch) return std::nullopt;
  const bool src_kept = k && contains(k->params, ch->args[0]);
  for (int p : ch->added)
    if (dst_kept && !contains(k->params, p)) throw Error("conv2d.onednn_blocked: a kept result, a plain added tensor");
  if (ch->posts.empty() && !k) return std::nullopt;  // the conv alone: op by op is the same call
  std::vector<te::Tensor> in;
  for (int a : ch->args) in.push_back(params[static_cast<size_t>(a)]);
  size_t next_add = 0;
  for (Post& p : ch->posts)
    if (p.kind == kPostAdd) {
      p.a = static_cast<int64_t>(in.size());
      in.push_back(params[static_cast<size_t>(ch->added[next_add++])]);
    }
  // A first add onto a kept result as oneDNN's sum (the result's buffer holds the added tensor,
  // copied there unless planned in place): the brgemm 1x1 convolutions take a sum, not a
  // binary add (with which oneDNN ran ResNet-50's 1x1 convolutions 10-20% slower).
  if (dst_kept && !ch->posts.empty() && ch->posts.front().kind == kPostAdd) ch->posts.front().kind = kPostSum;
  const int64_t kept = (src_kept ? kKeptSrc : 0) | (dst_kept ? kKeptDst : 0) | (dst_kept && !ch->added.empty() ? kKeptAdded : 0);
  return std::vector<te::Tensor>{conv_stage(*ch->anchor, in, blocked, ch->posts, ir::as_tensor(ch->anchor->type).shape,
                                            k ? block_of(k->layout) : 0, kept)};
}

// What conv2d.onednn_blocked can keep in a layout of oneDNN's: its input and its result, and the
// added tensors with its result; only where oneDNN has a kernel for the layouts, not its
// reference loop. The layout: NHWC where oneDNN has its brgemm convolutions (AVX-512 F/BW/VL/DQ;
// ResNet-50's 3x3 convolutions ran at 152 GFLOP/s in nChw16c, 189 in NHWC on a Zen 5), depthwise
// ones too (one layout for a chain: MobileNetV2 with its depthwise convolutions blocked and the
// others NHWC reordered between every two, 5.7 ms; all NHWC, 2.5, as fast as oneDNN's region);
// else channel-blocked by one vector of the target (whole blocks only: a kept buffer has the plain
// tensor's size).
topi::KeptLayoutSupport blocked_layouts(const ir::FunctionNode& fn, const target::Target& t) {
  topi::KeptLayoutSupport s;
  std::optional<Chain> ch = chain_of(fn, true);
  if (!ch) return s;
  const ir::CallNode& conv = *ch->anchor;
  const ir::TypeNode& x = ir::as_tensor(conv.args[0]->type);
  const Shape& y = ir::as_tensor(conv.type).shape;
  if (x.dtype != DType::f32 || x.shape.size() != 4 || y.size() != 4) return s;
  const bool brgemm = t.has("avx512f") && t.has("avx512bw") && t.has("avx512vl") && t.has("avx512dq");
  const int64_t lanes = t.vector_lanes();
  const int64_t B = brgemm ? kNhwcBlock : lanes;
  if (B != kNhwcBlock && B != 8 && B != 16) return s;
  const bool in = B == kNhwcBlock || x.shape[1] % B == 0, out = B == kNhwcBlock || y[1] % B == 0;
  if (!in && !out) return s;
  const std::string impl = conv2d_implementation(conv, in ? B : 0, out ? B : 0);
  if (impl.empty() || impl.rfind("ref", 0) == 0) return s;
  s.layout = B == kNhwcBlock ? "nhwc" : "nChw" + std::to_string(B) + "c";
  // With adds, the group is one call only with its result kept too (see conv_group).
  if (in) (ch->added.empty() ? s.params : s.with_result).push_back(ch->args[0]);
  if (out) {
    s.result = true;
    s.with_result.insert(s.with_result.end(), ch->added.begin(), ch->added.end());
    s.result_needs = ch->added;  // added to the result in the result's layout
    // The first added tensor is oneDNN's sum post-op (see conv_group): the result may be planned
    // in its storage, where the primitive accumulates onto it.
    // Not a tensor the convolution reads too (its data, when the group adds its own input).
    if (!ch->added.empty() && ch->posts.front().kind == kPostAdd && !contains(ch->args, ch->added.front()))
      s.in_place = ch->added.front();
  }
  return s;
}

}  // namespace

namespace {

std::string describe_implementation(const Shape& x, const Shape& w, const Shape& y, const ops::Conv2dAttrs& a,
                                    int64_t src_block, int64_t dst_block) {
  try {
    const memory::desc src = activation_desc(memory::dims(x.begin(), x.end()), src_block);
    const memory::desc dst = activation_desc(memory::dims(y.begin(), y.end()), dst_block);
    // A packed weight [ceil(O/B)][C][KH][KW][B] (a planned function's) describes the same [O][C][KH][KW].
    const memory::desc wei = weight_desc(y[1], w[1], w[2], w[3], a.groups, tag::any);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei,
                                      dst, {a.strides[0], a.strides[1]}, {a.dilation[0] - 1, a.dilation[1] - 1},
                                      {a.padding[0], a.padding[1]}, {a.padding[2], a.padding[3]});
    dnnl::convolution_forward::primitive_desc pd(d, cpu_engine());
    return pd.impl_info_str();
  } catch (const std::exception&) {  // dnnl::error, or a block oneDNN has no tag for
    return "";
  }
}

}  // namespace

std::string conv2d_implementation(const ir::CallNode& conv, int64_t src_block, int64_t dst_block) {
  const auto& a = conv.attrs_as<ops::Conv2dAttrs>();
  const Shape& x = ir::shape_of(conv.args[0]);
  const Shape& w = ir::shape_of(conv.args[1]);
  const Shape& y = ir::as_tensor(conv.type).shape;
  // Making a primitive descriptor takes a few ms for some shapes; the hook's split and lowering,
  // and the kept-layout pass of every compile with records, ask again for the same convolutions.
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::string> known;
  std::vector<int64_t> key = x;
  for (const Shape& s : {w, y, a.strides, a.padding, a.dilation}) key.insert(key.end(), s.begin(), s.end());
  key.insert(key.end(), {a.groups, src_block, dst_block});
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  std::string impl = describe_implementation(x, w, y, a, src_block, dst_block);
  std::lock_guard<std::mutex> lock(mu);
  return known[key] = impl;
}

te::Tensor conv2d_stage(const std::string& name, const ir::CallNode& conv, const te::Tensor& x, const te::Tensor& w,
                        const te::Tensor* bias, const std::vector<ConvPost>& posts, const std::vector<te::Tensor>& added,
                        const Shape& out, bool nhwc) {
  const auto& a = conv.attrs_as<ops::Conv2dAttrs>();
  const int64_t block = w.shape().size() == 5 ? w.shape()[4] : 0;
  std::vector<te::Tensor> in{x, w};
  if (bias) in.push_back(*bias);
  std::vector<int64_t> attrs = {a.strides[0], a.strides[1], a.padding[0], a.padding[1], a.padding[2],
                                a.padding[3], a.dilation[0], a.dilation[1], a.groups,     block,
                                nhwc ? 2 : 0, bias ? 1 : 0,  static_cast<int64_t>(posts.size()),
                                0,            0};
  size_t next = 0;
  for (const ConvPost& p : posts) {
    SY_CHECK((p.kind != ConvPost::Add && p.kind != ConvPost::Sum) || next < added.size())
        << "conv2d_stage: fewer added tensors than add post-ops";
    if (p.kind == ConvPost::Add) {
      attrs.insert(attrs.end(), {kPostAdd, static_cast<int64_t>(in.size()), 0});
      in.push_back(added[next++]);
    } else if (p.kind == ConvPost::Sum) {
      attrs.insert(attrs.end(), {kPostSum, static_cast<int64_t>(in.size()), 0});
      in.push_back(added[next++]);
    } else if (p.kind == ConvPost::Clip) {
      attrs.insert(attrs.end(), {kPostClip, float_bits(p.lo), float_bits(p.hi)});
    } else if (p.kind == ConvPost::Silu) {
      attrs.insert(attrs.end(), {kPostSilu, 0, 0});
    } else {
      attrs.insert(attrs.end(), {kPostRelu, 0, 0});
    }
  }
  SY_CHECK(next == added.size()) << "conv2d_stage: more added tensors than add post-ops";
  return te::stateful_extern_op(name, out, DType::f32, in, "sy_onednn_conv2d", attrs);
}

void register_conv2d() {
  const std::string lib = library_version();
  strategy::register_stateful_extern("sy_onednn_conv2d", {conv_init, conv_run, conv_destroy, lib});
  for (bool blocked : {false, true}) {
    topi::OpImpl impl;
    impl.name = blocked ? "conv2d.onednn_blocked" : "conv2d.onednn";
    impl.compute = [blocked](const ir::CallNode& c, const std::vector<te::Tensor>& in) { return conv_compute(c, in, blocked); };
    impl.group_compute = [blocked](const ir::FunctionNode& fn, const std::vector<te::Tensor>& params,
                                   const target::Target&) { return conv_group(fn, params, blocked); };
    impl.why_not = [](const ir::CallNode& c, const target::Target&) { return why_not_conv(c); };
    if (blocked) impl.kept_layouts = blocked_layouts;
    // Below every native implementation: chosen by a measured record, never by default.
    impl.priority = [](const ir::CallNode&, const target::Target&) { return 0; };
    impl.library = lib;
    strategy::register_implementation(ops::OpCode::Conv2d, std::move(impl));
  }
}

}  // namespace sy::externs::onednn
