// dense and matmul through oneDNN's matmul primitive as extern implementations: the primitive is
// made once per call site (at load); a constant weight (dense's packed weight, a matmul's constant
// right operand) is reordered once into the primitive's layout.
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "codegen/c/c_generator.h"
#include "externs/onednn/onednn_extern_util.h"
#include "externs/onednn/onednn_externs.h"
#include "ops/op.h"
#include "strategy/externs.h"
#include "strategy/strategy.h"
#include "te/tensor.h"

namespace sy::externs::onednn {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

// attrs: weight block (dense: its packed weight's block; 0: matmul's plain right operand; -1:
// dense with a plain weight W [N, K]; -2: a right operand B [K, N] for every row of a [.., K]),
// then optionally an activation as an eltwise post-op (MatMulAct), then optionally 1: the buffer
// before the result is a tensor of its shape added last (a binary add post-op).
// Buffers: a, b, [bias], [the added tensor], the result.
struct MatMulPrims {
  dnnl::matmul prim;
  memory::desc b, scratch;
  memory weights;  // a constant B in the primitive's layout
};

struct MatMul {
  memory::desc a, b_user, c, bias;
  bool has_bias = false, has_residual = false;
  int64_t act = 0;  // MatMulAct
  // The binary add post-op's argument: after the activation's post-op, if any.
  int residual_arg() const { return DNNL_ARG_ATTR_MULTIPLE_POST_OP(act != 0 ? 1 : 0) | DNNL_ARG_SRC_1; }
  ConstantWeights constant_b;  // a constant B (dense: W [N, K], i.e. B [K, N] with strides (1, K))
  PerThreads<MatMulPrims> prims;
  PerCaller callers;

  MatMulPrims make() const {
    MatMulPrims p;
    const memory::dims& bd = b_user.dims();
    const memory::desc b = constant_b.constant() ? memory::desc(bd, memory::data_type::f32, tag::any) : b_user;
    dnnl::matmul::desc d = has_bias ? dnnl::matmul::desc(a, b, bias, c) : dnnl::matmul::desc(a, b, c);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per run: concurrent runs share nothing
    dnnl::post_ops po;
    if (act != 0) {
      const dnnl::algorithm alg = act == kActRelu     ? dnnl::algorithm::eltwise_relu
                                  : act == kActGeluErf ? dnnl::algorithm::eltwise_gelu_erf
                                                       : dnnl::algorithm::eltwise_gelu_tanh;
      po.append_eltwise(1.f, alg, 0.f, 0.f);
    }
    if (has_residual) po.append_binary(dnnl::algorithm::binary_add, c);
    attr.set_post_ops(po);
    dnnl::matmul::primitive_desc pd(d, attr, cpu_engine());
    p.prim = dnnl::matmul(pd);
    p.b = pd.weights_desc();
    p.scratch = pd.scratchpad_desc();
    if (constant_b.constant()) p.weights = constant_b.in(p.b);
    return p;
  }
};

// Dims of a row-major tensor as oneDNN matmul wants them: rank 2 or 3 (batch dims folded).
memory::dims as_matmul(const memory::dims& d, int rank) {
  if (rank == 2) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < d.size(); ++i) rows *= d[i];
    return {rows, d.back()};
  }
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < d.size(); ++i) batch *= d[i];
  return {batch, d[d.size() - 2], d.back()};
}

memory::desc plain(const memory::dims& d) {
  return memory::desc(d, memory::data_type::f32, d.size() == 2 ? tag::ab : tag::abc);
}

void* matmul_init(const sy_extern_site* s, char* err, size_t err_size) {
  return init_or_explain(err, err_size, [&]() -> void* {
    if (s->num_attrs < 1 || s->num_attrs > 3 || (s->num_attrs == 3 && s->attrs[2] != 1))
      throw std::runtime_error("matmul: unexpected attributes");
    const bool residual = s->num_attrs == 3;
    check_site(*s, residual ? 4 : 3, residual ? 5 : 4, s->num_attrs, "matmul");
    auto m = std::make_unique<MatMul>();
    const int64_t block = s->attrs[0];
    m->act = s->num_attrs >= 2 ? s->attrs[1] : 0;
    if (m->act < 0 || m->act > kActGeluTanh) throw std::runtime_error("matmul: an activation of kind " + std::to_string(m->act));
    m->has_residual = residual;
    m->has_bias = s->num_buffers == (residual ? 5 : 4);
    if (residual && dims_of(*s, s->num_buffers - 2) != dims_of(*s, s->num_buffers - 1))
      throw std::runtime_error("matmul: an added tensor of another shape than the result");
    const int out = s->num_buffers - 1;
    const memory::dims x = dims_of(*s, 0), w = dims_of(*s, 1), y = dims_of(*s, out);
    memory::dims ad, bd, cd;
    if (block > 0 || block == -1) {  // dense: x [..., K] . W^T with W packed [ceil(N/B), K, B] or plain [N, K]
      const int64_t K = x.back(), N = y.back();
      if (block > 0 && (w.size() != 3 || w[2] != block)) throw std::runtime_error("dense: expected a packed weight");
      if (block < 0 && w != memory::dims{N, K}) throw std::runtime_error("dense: expected a weight [N, K]");
      ad = as_matmul(x, 2);
      cd = as_matmul(y, 2);
      bd = {K, N};
      m->b_user = memory::desc(bd, memory::data_type::f32, tag::ba);
      if (const void* wc = s->constants[1]) {
        const float* f = static_cast<const float*>(wc);
        m->constant_b.hold_plain(m->b_user, block > 0 ? unpack_rows(f, N, K, block) : std::vector<float>(f, f + N * K));
      } else if (block > 0) {
        throw std::runtime_error("dense: a packed weight must be a constant");
      }
    } else if (block == -2) {  // a [..., K] . B [K, N], a's leading dims as rows
      const int64_t K = x.back(), N = y.back();
      if (w != memory::dims{K, N}) throw std::runtime_error("matmul: expected a right operand [K, N]");
      ad = as_matmul(x, 2);
      cd = as_matmul(y, 2);
      bd = {K, N};
      m->b_user = plain(bd);
      if (const void* bc = s->constants[1]) {
        const float* f = static_cast<const float*>(bc);
        m->constant_b.hold_plain(m->b_user, std::vector<float>(f, f + K * N));
      }
    } else if (block != 0) {
      throw std::runtime_error("matmul: a weight block of " + std::to_string(block));
    } else {  // matmul: same-rank operands, batch dims equal or all 1 in B (why_not_matmul)
      if (x.size() < 2 || x.size() != w.size()) throw std::runtime_error("matmul: operands of different ranks");
      const int rank = x.size() > 2 ? 3 : 2;
      ad = as_matmul(x, rank);
      bd = as_matmul(w, rank);
      cd = as_matmul(y, rank);
      m->b_user = plain(bd);
      if (const void* bc = s->constants[1]) {
        const float* f = static_cast<const float*>(bc);
        m->constant_b.hold_plain(m->b_user, std::vector<float>(f, f + shape_numel(Shape(bd.begin(), bd.end()))));
      }
    }
    m->a = plain(ad);
    m->c = plain(cd);
    if (m->has_bias) {
      memory::dims bias(cd.size(), 1);
      bias.back() = cd.back();
      m->bias = plain(bias);
    }
    m->prims.get([&] { return m->make(); });  // the primitive for the current thread count, now
    m->constant_b.release_plain();
    return m.release();
  });
}

int32_t matmul_run(void* state, void* const* b) {
  const MatMul& m = *static_cast<const MatMul*>(state);
  try {
    const MatMulPrims& p = m.prims.get([&] { return m.make(); });
    BoundArgs& r = m.callers.get(&p, [&] {
      std::unordered_map<int, memory> a{{DNNL_ARG_SRC, unbound(m.a)},
                                        {DNNL_ARG_WEIGHTS, m.constant_b.constant() ? p.weights : unbound(p.b)},
                                        {DNNL_ARG_DST, unbound(m.c)},
                                        {DNNL_ARG_SCRATCHPAD, unbound(p.scratch)}};
      if (m.has_bias) a.emplace(DNNL_ARG_BIAS, unbound(m.bias));
      if (m.has_residual) a.emplace(m.residual_arg(), unbound(m.c));
      return a;
    });
    r.set(DNNL_ARG_SRC, b[0]);
    if (!m.constant_b.constant()) r.set(DNNL_ARG_WEIGHTS, b[1]);
    const int out = 2 + (m.has_bias ? 1 : 0) + (m.has_residual ? 1 : 0);
    r.set(DNNL_ARG_DST, b[out]);
    if (m.has_residual) r.set(m.residual_arg(), b[out - 1]);
    r.set(DNNL_ARG_SCRATCHPAD, run_buffer(kScratchpad, p.scratch.get_size()));
    if (m.has_bias) r.set(DNNL_ARG_BIAS, b[2]);
    p.prim.execute(r.stream, r.args);
    r.stream.wait();
  } catch (const std::exception&) {
    return codegen::kFaultExtern;
  }
  return 0;
}

void matmul_destroy(void* state) { delete static_cast<MatMul*>(state); }

const ir::TypeNode& type_of(const ir::Expr& e) { return ir::as_tensor(e->type); }

std::string why_not_dense(const ir::CallNode& c) { return topi::why_not_packed_dense(c); }

// oneDNN's matmul broadcasts batch dims of B only; both operands of rank >= 2.
std::string why_not_matmul(const ir::CallNode& c) {
  const ir::TypeNode &a = type_of(c.args[0]), &b = type_of(c.args[1]);
  if (a.dtype != DType::f32 || b.dtype != DType::f32) return "not f32";
  if (a.shape.size() < 2 || a.shape.size() != b.shape.size()) return "operands of different ranks or vectors";
  if (shape_numel(a.shape) == 0 || shape_numel(b.shape) == 0) return "an empty operand";
  int64_t bb = 1;
  for (size_t i = 0; i + 2 < b.shape.size(); ++i) bb *= b.shape[i];
  for (size_t i = 0; i + 2 < a.shape.size(); ++i)
    if (a.shape[i] != b.shape[i] && bb != 1) return "batch dims broadcast in a way oneDNN's matmul does not";
  return "";
}

}  // namespace

te::Tensor matmul_stage(const std::string& name, GemmForm form, const te::Tensor& a, const te::Tensor& b,
                        const te::Tensor* bias, const Shape& out, MatMulAct act, const te::Tensor* residual) {
  std::vector<te::Tensor> in{a, b};
  if (bias) in.push_back(*bias);
  if (residual) in.push_back(*residual);
  const int64_t mode = form == GemmForm::Dense ? -1 : form == GemmForm::Rows ? -2 : 0;
  std::vector<int64_t> attrs{mode};
  if (act != kActNone || residual) attrs.push_back(act);
  if (residual) attrs.push_back(1);
  return te::stateful_extern_op(name, out, DType::f32, in, "sy_onednn_matmul", attrs);
}

void register_matmul() {
  const std::string lib = library_version();
  strategy::register_stateful_extern("sy_onednn_matmul", {matmul_init, matmul_run, matmul_destroy, lib});
  auto add = [&](ops::OpCode op, const char* name, std::string (*why)(const ir::CallNode&), bool dense) {
    topi::OpImpl impl;
    impl.name = name;
    impl.compute = [dense](const ir::CallNode& c, const std::vector<te::Tensor>& in) {
      const int64_t block = dense ? type_of(c.args[1]).shape[2] : 0;
      return std::vector<te::Tensor>{te::stateful_extern_op(dense ? "dense_onednn" : "matmul_onednn", ir::as_tensor(c.type).shape,
                                                            DType::f32, in, "sy_onednn_matmul", {block})};
    };
    impl.why_not = [why](const ir::CallNode& c, const target::Target&) { return why(c); };
    impl.priority = [](const ir::CallNode&, const target::Target&) { return 0; };
    impl.library = lib;
    strategy::register_implementation(op, std::move(impl));
  };
  add(ops::OpCode::Dense, "dense.onednn", why_not_dense, true);
  add(ops::OpCode::MatMul, "matmul.onednn", why_not_matmul, false);
}

}  // namespace sy::externs::onednn
