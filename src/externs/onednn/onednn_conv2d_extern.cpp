// conv2d through oneDNN as extern implementations: the primitive is made once per call site (at
// load) and the weight reordered once into the primitive's layout. Activations stay NCHW, the
// layout of the neighbouring native kernels: conv2d.onednn hands oneDNN NCHW as it is (oneDNN
// picks its best implementation for it); conv2d.onednn_blocked reorders the input to oneDNN's
// preferred layout and the result back inside the call, which pays for itself only when that
// convolution is enough faster (the tuner measures both).
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "codegen/c/c_generator.h"
#include "externs/onednn/onednn_extern_util.h"
#include "externs/onednn/onednn_externs.h"
#include "ops/attrs.h"
#include "strategy/externs.h"
#include "strategy/strategy.h"
#include "te/tensor.h"

namespace sy::externs::onednn {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

// attrs: stride h w, pad top left bottom right, dilation h w, groups, weight block (0: plain
// [O, C/G, KH, KW] weight), blocked activations (0/1).
enum Attr { kSh, kSw, kPt, kPl, kPb, kPr, kDh, kDw, kGroups, kBlock, kBlocked, kNumAttrs };

// What one thread count needs.
struct ConvPrims {
  dnnl::convolution_forward prim;
  memory::desc src, dst, wei, scratch;
  dnnl::reorder src_in, dst_out, wei_in;  // user layout -> the primitive's, and back
  memory weights;                         // a constant weight in the primitive's layout
};

struct Conv {
  memory::desc src_user, dst_user, wei_user, bias;
  memory::dims strides, dil, pad_l, pad_r;
  bool has_bias = false, blocked = false;
  std::vector<float> plain_weight;  // a constant weight, plain, for primitives made after init
  PerThreads<ConvPrims> prims;

  ConvPrims make() const {
    ConvPrims p;
    const auto any = [](const memory::desc& d) { return memory::desc(d.dims(), memory::data_type::f32, tag::any); };
    const memory::desc src = blocked ? any(src_user) : src_user, dst = blocked ? any(dst_user) : dst_user;
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc d =
        has_bias ? dnnl::convolution_forward::desc(kind, alg, src, any(wei_user), bias, dst, strides, dil, pad_l, pad_r)
                 : dnnl::convolution_forward::desc(kind, alg, src, any(wei_user), dst, strides, dil, pad_l, pad_r);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per run: concurrent runs share nothing
    dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine());
    p.prim = dnnl::convolution_forward(pd);
    p.src = pd.src_desc();
    p.dst = pd.dst_desc();
    p.wei = pd.weights_desc();
    p.scratch = pd.scratchpad_desc();
    auto reorder = [](const memory::desc& from, const memory::desc& to) {
      return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to));
    };
    if (p.src != src_user) p.src_in = reorder(src_user, p.src);
    if (p.dst != dst_user) p.dst_out = reorder(p.dst, dst_user);
    p.wei_in = reorder(wei_user, p.wei);
    if (!plain_weight.empty()) {
      p.weights = memory(p.wei, cpu_engine());
      memory user(wei_user, cpu_engine(), const_cast<float*>(plain_weight.data()));
      dnnl::stream st(cpu_engine());
      p.wei_in.execute(st, user, p.weights);
      st.wait();
    }
    return p;
  }
};

void* conv_init(const sy_extern_site* s, char* err, size_t err_size) {
  return init_or_explain(err, err_size, [&]() -> void* {
    check_site(*s, 3, 4, kNumAttrs, "conv2d");
    const int out = s->num_buffers - 1;
    if (s->ranks[0] != 4 || s->ranks[out] != 4 || (s->ranks[1] != 4 && s->ranks[1] != 5))
      throw std::runtime_error("conv2d: expected NCHW data and a 4-d (or packed 5-d) weight");
    const int64_t* a = s->attrs;
    auto c = std::make_unique<Conv>();
    c->has_bias = s->num_buffers == 4;
    c->blocked = a[kBlocked] != 0;
    const memory::dims x = dims_of(*s, 0), y = dims_of(*s, out);
    const int64_t G = a[kGroups], O = y[1], C = x[1], KH = s->shapes[1][2], KW = s->shapes[1][3];
    if (G < 1 || C % G || O % G) throw std::runtime_error("conv2d: channels not divisible by the groups");
    memory::dims w = {O, C / G, KH, KW};
    tag wtag = tag::oihw;
    if (G > 1) {
      w = {G, O / G, C / G, KH, KW};
      wtag = tag::goihw;
    }
    c->src_user = memory::desc(x, memory::data_type::f32, tag::nchw);
    c->dst_user = memory::desc(y, memory::data_type::f32, tag::nchw);
    c->wei_user = memory::desc(w, memory::data_type::f32, wtag);
    if (c->has_bias) c->bias = memory::desc({O}, memory::data_type::f32, tag::a);
    c->strides = {a[kSh], a[kSw]};
    c->dil = {a[kDh] - 1, a[kDw] - 1};  // oneDNN counts the gaps, ONNX the step
    c->pad_l = {a[kPt], a[kPl]};
    c->pad_r = {a[kPb], a[kPr]};
    if (const void* wc = s->constants[1]) {
      const float* wf = static_cast<const float*>(wc);
      c->plain_weight = a[kBlock] > 0 ? unpack_rows(wf, O, (C / G) * KH * KW, a[kBlock])
                                      : std::vector<float>(wf, wf + O * (C / G) * KH * KW);
    } else if (a[kBlock] > 0) {
      throw std::runtime_error("conv2d: a packed weight must be a constant");
    }
    c->prims.get([&] { return c->make(); });  // the primitive for the current thread count, now
    return c.release();
  });
}

int32_t conv_run(void* state, void* const* b) {
  const Conv& c = *static_cast<const Conv*>(state);
  try {
    const ConvPrims& p = c.prims.get([&] { return c.make(); });
    dnnl::engine& e = cpu_engine();
    dnnl::stream st(e);
    const int out = c.has_bias ? 3 : 2;
    memory src_user(c.src_user, e, b[0]), dst_user(c.dst_user, e, b[out]);
    memory src = src_user, dst = dst_user, wei = p.weights;
    if (p.src_in) {
      src = run_memory(p.src, kSrc);
      p.src_in.execute(st, src_user, src);
    }
    if (p.dst_out) dst = run_memory(p.dst, kDst);
    if (c.plain_weight.empty()) {  // a weight computed at run time: reordered per call
      wei = run_memory(p.wei, kWeights);
      memory user(c.wei_user, e, b[1]);
      p.wei_in.execute(st, user, wei);
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_WEIGHTS, wei},
                                         {DNNL_ARG_DST, dst},
                                         {DNNL_ARG_SCRATCHPAD, run_memory(p.scratch, kScratchpad)}};
    if (c.has_bias) args.emplace(DNNL_ARG_BIAS, memory(c.bias, e, b[2]));
    p.prim.execute(st, args);
    if (p.dst_out) p.dst_out.execute(st, dst, dst_user);
    st.wait();
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
  if (w.shape.size() == 5 && c.attrs_as<ops::Conv2dAttrs>().groups != 1) return "a packed grouped weight";
  if (w.shape.size() != 4 && w.shape.size() != 5) return "unexpected weight rank";
  return "";
}

std::vector<te::Tensor> conv_compute(const ir::CallNode& c, const std::vector<te::Tensor>& in, bool blocked) {
  const auto& a = c.attrs_as<ops::Conv2dAttrs>();
  const ir::TypeNode& w = ir::as_tensor(c.args.at(1)->type);
  const int64_t block = w.shape.size() == 5 ? w.shape[4] : 0;
  std::vector<int64_t> attrs = {a.strides[0], a.strides[1], a.padding[0], a.padding[1], a.padding[2], a.padding[3],
                                a.dilation[0], a.dilation[1], a.groups, block, blocked ? 1 : 0};
  return {te::stateful_extern_op(blocked ? "conv2d_onednn_blocked" : "conv2d_onednn", ir::as_tensor(c.type).shape,
                                 DType::f32, in, "sy_onednn_conv2d", attrs)};
}

}  // namespace

void register_conv2d() {
  const std::string lib = library_version();
  strategy::register_stateful_extern("sy_onednn_conv2d", {conv_init, conv_run, conv_destroy, lib});
  for (bool blocked : {false, true}) {
    topi::OpImpl impl;
    impl.name = blocked ? "conv2d.onednn_blocked" : "conv2d.onednn";
    impl.compute = [blocked](const ir::CallNode& c, const std::vector<te::Tensor>& in) { return conv_compute(c, in, blocked); };
    impl.why_not = [](const ir::CallNode& c, const target::Target&) { return why_not_conv(c); };
    // Below every native implementation: chosen by a measured record, never by default.
    impl.priority = [](const ir::CallNode&, const target::Target&) { return 0; };
    impl.library = lib;
    strategy::register_implementation(ops::OpCode::Conv2d, std::move(impl));
  }
}

}  // namespace sy::externs::onednn
