// Max and global average pooling through oneDNN, for an integration that keeps activations in
// oneDNN's blocked layout between its primitives (the oneDNN target hook): the primitive is made
// once per call site, for the layout of its buffers, so a pooling between two blocked
// convolutions needs no reorder.
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "codegen/c/c_generator.h"
#include "externs/onednn/onednn_extern_util.h"
#include "externs/onednn/onednn_externs.h"
#include "strategy/externs.h"
#include "te/tensor.h"

namespace sy::externs::onednn {

namespace {

using dnnl::memory;

// attrs: kind (1 max, 2 global average), kernel h w, strides h w, padding top left bottom right,
// and 1 when the blocked buffers are NHWC ([N, 1, H, W, C]).
enum Attr { kKind, kKh, kKw, kSh, kSw, kPt, kPl, kPb, kPr, kNhwc, kNumAttrs };

struct PoolPrims {
  dnnl::pooling_v2_forward prim;
  memory::desc scratch;
};

struct Pool {
  memory::desc src, dst;
  memory::dims kernel, strides, dil{0, 0}, pad_l, pad_r;
  dnnl::algorithm alg = dnnl::algorithm::pooling_max;
  PerThreads<PoolPrims> prims;
  PerCaller callers;

  PoolPrims make() const {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::pooling_v2_forward::primitive_desc pd(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel, dil, pad_l, pad_r),
        attr, cpu_engine());
    return {dnnl::pooling_v2_forward(pd), pd.scratchpad_desc()};
  }
};

void* pool_init(const sy_extern_site* s, char* err, size_t err_size) {
  return init_or_explain(err, err_size, [&]() -> void* {
    // Artifacts made before the layout attribute have one fewer: their blocked buffers are nChw<B>c.
    const bool has_layout = s->num_attrs != kNumAttrs - 1;
    check_site(*s, 2, 2, has_layout ? kNumAttrs : kNumAttrs - 1, "pool2d");
    if (s->ranks[0] != s->ranks[1] || (s->ranks[0] != 4 && s->ranks[0] != 5))
      throw std::runtime_error("pool2d: expected NCHW or channel-blocked data, the result in the same layout");
    const int64_t* a = s->attrs;
    auto p = std::make_unique<Pool>();
    const bool nhwc = has_layout && a[kNhwc] != 0;
    p->src = activation_desc(*s, 0, nhwc);
    p->dst = activation_desc(*s, 1, nhwc);
    const memory::dims x = logical_dims(*s, 0);
    if (a[kKind] == 2) {
      p->alg = dnnl::algorithm::pooling_avg_exclude_padding;
      p->kernel = {x[2], x[3]};
      p->strides = {1, 1};
      p->pad_l = p->pad_r = {0, 0};
    } else if (a[kKind] == 1) {
      p->kernel = {a[kKh], a[kKw]};
      p->strides = {a[kSh], a[kSw]};
      p->pad_l = {a[kPt], a[kPl]};
      p->pad_r = {a[kPb], a[kPr]};
    } else {
      throw std::runtime_error("pool2d: a pooling of kind " + std::to_string(a[kKind]));
    }
    p->prims.get([&] { return p->make(); });
    return p.release();
  });
}

int32_t pool_run(void* state, void* const* b) {
  const Pool& p = *static_cast<const Pool*>(state);
  try {
    const PoolPrims& pp = p.prims.get([&] { return p.make(); });
    BoundArgs& r = p.callers.get(&pp, [&] {
      return std::unordered_map<int, memory>{
          {DNNL_ARG_SRC, unbound(p.src)}, {DNNL_ARG_DST, unbound(p.dst)}, {DNNL_ARG_SCRATCHPAD, unbound(pp.scratch)}};
    });
    r.set(DNNL_ARG_SRC, b[0]);
    r.set(DNNL_ARG_DST, b[1]);
    r.set(DNNL_ARG_SCRATCHPAD, run_buffer(kScratchpad, pp.scratch.get_size()));
    pp.prim.execute(r.stream, r.args);
    r.stream.wait();
  } catch (const std::exception&) {
    return codegen::kFaultExtern;
  }
  return 0;
}

void pool_destroy(void* state) { delete static_cast<Pool*>(state); }

}  // namespace

te::Tensor pool2d_stage(const std::string& name, bool global, const std::vector<int64_t>& kernel,
                        const std::vector<int64_t>& strides, const std::vector<int64_t>& padding, const te::Tensor& x,
                        const Shape& out, bool nhwc) {
  std::vector<int64_t> attrs(kNumAttrs, 0);
  attrs[kKind] = global ? 2 : 1;
  attrs[kNhwc] = nhwc ? 1 : 0;
  if (!global) {
    attrs[kKh] = kernel.at(0), attrs[kKw] = kernel.at(1);
    attrs[kSh] = strides.at(0), attrs[kSw] = strides.at(1);
    for (size_t i = 0; i < 4; ++i) attrs[kPt + i] = padding.at(i);
  }
  return te::stateful_extern_op(name, out, DType::f32, {x}, "sy_onednn_pool2d", attrs);
}

void register_pool2d() {
  strategy::register_stateful_extern("sy_onednn_pool2d", {pool_init, pool_run, pool_destroy, library_version()});
}

}  // namespace sy::externs::onednn
