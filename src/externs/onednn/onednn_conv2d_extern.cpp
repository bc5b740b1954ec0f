// conv2d through oneDNN as extern implementations: the primitive is made once per call site (at
// load) and the weight reordered once into the primitive's layout. Activations stay NCHW, the
// layout of the neighbouring native kernels: conv2d.onednn hands oneDNN NCHW as it is (oneDNN
// picks its best implementation for it); conv2d.onednn_blocked reorders the input to oneDNN's
// preferred blocked layout and the result back inside the call, which pays for itself only when
// the blocked convolution is enough faster (the tuner measures both).
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
// OIHW weight), blocked activations (0/1).
enum Attr { kSh, kSw, kPt, kPl, kPb, kPr, kDh, kDw, kGroups, kBlock, kBlocked, kNumAttrs };

struct Conv {
  dnnl::convolution_forward prim;
  memory::desc src_user, dst_user, src, dst, wei_user, wei, bias;
  memory weights;  // in the primitive's layout, when the weight is a constant
  dnnl::reorder wei_reorder;
  bool has_bias = false, blocked = false, const_weight = false;
};

void* conv_init(const sy_extern_site* s, char* err, size_t err_size) {
  return init_or_explain(err, err_size, [&]() -> void* {
    if (s->num_attrs != kNumAttrs || (s->num_buffers != 3 && s->num_buffers != 4))
      throw std::runtime_error("conv2d: unexpected site");
    const int64_t* a = s->attrs;
    auto c = std::make_unique<Conv>();
    c->has_bias = s->num_buffers == 4;
    c->blocked = a[kBlocked] != 0;
    const int out = s->num_buffers - 1;
    const memory::dims x = dims_of(*s, 0), y = dims_of(*s, out);
    const int64_t G = a[kGroups], O = y[1], C = x[1], KH = s->shapes[1][2], KW = s->shapes[1][3];
    memory::dims w = {O, C / G, KH, KW};
    tag wtag = tag::oihw;
    if (G > 1) {
      w = {G, O / G, C / G, KH, KW};
      wtag = tag::goihw;
    }
    c->src_user = memory::desc(x, memory::data_type::f32, tag::nchw);
    c->dst_user = memory::desc(y, memory::data_type::f32, tag::nchw);
    c->wei_user = memory::desc(w, memory::data_type::f32, wtag);
    c->src = c->blocked ? memory::desc(x, memory::data_type::f32, tag::any) : c->src_user;
    c->dst = c->blocked ? memory::desc(y, memory::data_type::f32, tag::any) : c->dst_user;
    memory::desc wany(w, memory::data_type::f32, tag::any);
    if (c->has_bias) c->bias = memory::desc({O}, memory::data_type::f32, tag::a);
    const memory::dims strides = {a[kSh], a[kSw]}, dil = {a[kDh] - 1, a[kDw] - 1}, pl = {a[kPt], a[kPl]},
                       pr = {a[kPb], a[kPr]};
    dnnl::convolution_forward::desc d =
        c->has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                      c->src, wany, c->bias, c->dst, strides, dil, pl, pr)
                    : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                      c->src, wany, c->dst, strides, dil, pl, pr);
    dnnl::convolution_forward::primitive_desc pd(d, cpu_engine());
    c->prim = dnnl::convolution_forward(pd);
    c->src = pd.src_desc();
    c->dst = pd.dst_desc();
    c->wei = pd.weights_desc();
    c->wei_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), c->wei_user, cpu_engine(), c->wei));
    c->const_weight = s->constants[1] != nullptr;
    if (c->const_weight) {
      std::vector<float> plain;
      const void* wsrc = s->constants[1];
      if (a[kBlock] > 0) {
        plain = unpack_rows(static_cast<const float*>(wsrc), O, (C / G) * KH * KW, a[kBlock]);
        wsrc = plain.data();
      }
      c->weights = memory(c->wei, cpu_engine());
      memory user(c->wei_user, cpu_engine(), const_cast<void*>(wsrc));
      dnnl::stream st(cpu_engine());
      c->wei_reorder.execute(st, user, c->weights);
      st.wait();
    } else if (a[kBlock] > 0) {
      throw std::runtime_error("conv2d: a packed weight must be a constant");
    }
    return c.release();
  });
}

int32_t conv_run(void* state, void* const* b) {
  const Conv& c = *static_cast<const Conv*>(state);
  try {
    dnnl::engine& e = cpu_engine();
    dnnl::stream st(e);
    const int out = c.has_bias ? 3 : 2;
    memory src_user(c.src_user, e, b[0]), dst_user(c.dst_user, e, b[out]);
    memory src = src_user, dst = dst_user, wei = c.weights;
    if (c.blocked) {
      if (c.src != c.src_user) {
        src = memory(c.src, e);
        dnnl::reorder(src_user, src).execute(st, src_user, src);
      }
      if (c.dst != c.dst_user) dst = memory(c.dst, e);
    }
    if (!c.const_weight) {
      wei = memory(c.wei, e);
      memory user(c.wei_user, e, b[1]);
      c.wei_reorder.execute(st, user, wei);
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (c.has_bias) args.emplace(DNNL_ARG_BIAS, memory(c.bias, e, b[2]));
    c.prim.execute(st, args);
    if (dst.get() != dst_user.get()) dnnl::reorder(dst, dst_user).execute(st, dst, dst_user);
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
  if (x.dtype != DType::f32 || w.dtype != DType::f32) return "not f32";
  if (x.shape.size() != 4) return "not a 2-d convolution over NCHW";
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
  // The site's weight is given with its plain kernel extents (packed: [O/B, C, KH, KW, B]).
  return {te::stateful_extern_op(blocked ? "conv2d_onednn_blocked" : "conv2d_onednn", ir::as_tensor(c.type).shape,
                                 DType::f32, in, "sy_onednn_conv2d", attrs)};
}

}  // namespace

void register_conv2d() {
  strategy::register_stateful_extern("sy_onednn_conv2d", {conv_init, conv_run, conv_destroy, library_version()});
  for (bool blocked : {false, true}) {
    topi::OpImpl impl;
    impl.name = blocked ? "conv2d.onednn_blocked" : "conv2d.onednn";
    impl.compute = [blocked](const ir::CallNode& c, const std::vector<te::Tensor>& in) { return conv_compute(c, in, blocked); };
    impl.why_not = [](const ir::CallNode& c, const target::Target&) { return why_not_conv(c); };
    // Below every native implementation: chosen by a measured record, never by default.
    impl.priority = [](const ir::CallNode&, const target::Target&) { return 0; };
    strategy::register_implementation(ops::OpCode::Conv2d, std::move(impl));
  }
}

}  // namespace sy::externs::onednn
