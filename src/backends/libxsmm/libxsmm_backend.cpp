// The libxsmm integration through a target hook: the backend claims GEMM composites (dense or
// matmul, a bias, relu or gelu) like a BYOC backend, but builds no runtime module. Its lowering
// hook turns each region into a loop-IR kernel whose GEMMs are calls of sy_libxsmm_gemm (a
// stateful extern: libxsmm's JIT kernels dispatched once at load, the weight packed once), so
// the region is memory-planned with the native kernels and lands in the same library.
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "backends/backend.h"
#include "backends/libxsmm/libxsmm_gemm.h"
#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "pattern/idioms.h"
#include "support/error.h"
#include "support/numbered.h"
#include "te/lower.h"
#include "te/tensor.h"

namespace sy::backends {

namespace {

using ops::OpCode;
using namespace pattern;
using libxsmm::Epilogue;
using libxsmm::GemmMode;

const ir::CallNode* as_op(const ir::Expr& e, OpCode op) {
  auto* c = e->as<ir::CallNode>();
  return c && c->is_op() && c->op == op ? c : nullptr;
}

// A composite's parts: the GEMM call, its bias (an add's constant, or dense's third argument)
// and the activation on top.
struct GemmParts {
  const ir::CallNode* gemm = nullptr;
  ir::Expr bias;  // null: none
  Epilogue act = Epilogue::None;
  bool two_biases = false;  // a dense with its own bias, then an add
};

// The parts of a matched or outlined chain act(add(gemm, c)) with each step optional.
GemmParts parts_of(const ir::Expr& root) {
  GemmParts p;
  ir::Expr e = root;
  if (auto* r = as_op(e, OpCode::Relu)) {
    p.act = Epilogue::Relu;
    e = r->args[0];
  } else if (auto* g = as_op(e, OpCode::Gelu)) {
    p.act = g->attrs_as<ops::GeluAttrs>().approximate == "tanh" ? Epilogue::GeluTanh : Epilogue::GeluErf;
    e = g->args[0];
  }
  if (auto* a = as_op(e, OpCode::Add)) {
    const bool gemm_first = as_op(a->args[0], OpCode::Dense) || as_op(a->args[0], OpCode::MatMul);
    p.bias = a->args[gemm_first ? 1 : 0];
    e = a->args[gemm_first ? 0 : 1];
  }
  p.gemm = e->as<ir::CallNode>();
  if (p.gemm && p.gemm->is_op() && p.gemm->op == OpCode::Dense && p.gemm->args.size() == 3) {
    p.two_biases = p.bias != nullptr;
    p.bias = p.gemm->args[2];
  }
  return p;
}

std::string check_gemm(const Match& m) {
  GemmParts p = parts_of(m.nodes.back());
  if (!p.gemm) return "libxsmm: no GEMM in the match";
  for (const ir::Expr& a : p.gemm->args)
    if (ir::dtype_of(a) != DType::f32) return "libxsmm: dtype " + std::string(dtype_name(ir::dtype_of(a))) + " not supported (float32 only)";
  const Shape& a = ir::shape_of(p.gemm->args[0]);
  const Shape& b = ir::shape_of(p.gemm->args[1]);
  const Shape& y = ir::as_tensor(p.gemm->type).shape;
  if (a.size() < 2) return "libxsmm: data of rank " + std::to_string(a.size()) + " (a GEMM needs rows)";
  const int64_t N = y.back();
  if (p.gemm->op == OpCode::Dense) {
    if (p.two_biases) return "libxsmm: a dense with a bias and another add";
  } else {
    if (b.size() < 2) return "libxsmm matmul: a vector operand";
    if (a.size() != y.size() || !std::equal(a.begin(), a.end() - 2, y.begin()))
      return "libxsmm matmul: the left operand " + shape_str(a) + " is broadcast over the batch";
    if (b.size() > 2 && (b.size() != y.size() || !std::equal(b.begin(), b.end() - 2, y.begin())))
      return "libxsmm matmul: the right operand's batch " + shape_str(b) + " is broadcast";
  }
  if (p.bias) {
    Shape bs = ir::shape_of(p.bias);
    while (bs.size() > 1 && bs.front() == 1) bs.erase(bs.begin());
    if (bs != Shape{N}) return "libxsmm: the add's operand " + shape_str(ir::shape_of(p.bias)) + " is not a bias of " + std::to_string(N);
    if (ir::shape_of(p.bias).size() > y.size()) return "libxsmm: the bias broadcasts the output";
  }
  return "";
}

bool is_gemm_composite(const ir::Expr& e, bool without_activation) {
  auto* c = e->as<ir::CallNode>();
  auto* f = c && c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
  auto name = f ? f->attrs.find("Composite") : ir::FuncAttrs::const_iterator();
  if (!f || name == f->attrs.end() || name->second.rfind("libxsmm.gemm", 0) != 0) return false;
  return !without_activation || name->second.find("_act") == std::string::npos;
}

// The chain's constants GELU's (pattern::check_erf_gelu), and its input a GEMM composite's
// without an activation (the GEMM rules run first): the hook fuses the GELU into that GEMM's
// epilogue.
std::string check_gelu_erf(const Match& m) {
  ir::Expr x;
  const std::string why = check_erf_gelu(m, &x);
  if (!why.empty()) return "libxsmm gelu: " + why;
  if (!is_gemm_composite(x, true)) return "libxsmm gelu: only as the epilogue of one of its GEMMs";
  return "";
}

std::vector<CompositeRule> gemm_rules() {
  Pattern core = alt({op(OpCode::Dense, {wildcard(), constant(), constant()}), op(OpCode::Dense, {wildcard(), constant()}),
                      op(OpCode::MatMul, {wildcard(), wildcard()})});
  Pattern biased = alt({op(OpCode::Add, {core, constant()}), op(OpCode::Add, {constant(), core})});
  auto act = [](const Pattern& x) { return alt({op(OpCode::Relu, {x}), op(OpCode::Gelu, {x})}); };
  return {{"libxsmm.gemm_bias_act", act(biased), check_gemm},
          {"libxsmm.gemm_bias", biased, check_gemm},
          {"libxsmm.gemm_act", act(core), check_gemm},
          {"libxsmm.gemm", core, check_gemm},
          {"libxsmm.gelu_erf", erf_gelu(), check_gelu_erf}};
}

bool is_gelu(const ir::CallNode& c) {
  auto* f = c.callee ? c.callee->as<ir::FunctionNode>() : nullptr;
  auto name = f ? f->attrs.find("Composite") : ir::FuncAttrs::const_iterator();
  return f && name != f->attrs.end() && name->second == "libxsmm.gelu_erf";
}

// The region's GEMM composites as calls of sy_libxsmm_gemm; anything else in it is refused (the
// backend claims only its composites).
class GemmHook : public LoweringHook {
 public:
  tir::PrimFunc lower(const ir::FunctionNode& fn, const std::string& name, const target::Target&) const override {
    std::unordered_map<const ir::ExprNode*, std::vector<te::Tensor>> value;
    std::vector<te::Tensor> args;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const ir::TypeNode& t = ir::as_tensor(fn.params[i]->type);
      args.push_back(te::placeholder(t.shape, t.dtype, numbered("p", static_cast<int64_t>(i))));
      value[fn.params[i].get()] = {args.back()};
    }
    // A GEMM whose only reader is the region's erf-GELU composite (and not a result of the region)
    // takes the GELU as its epilogue; the GELU's value is then the GEMM's.
    std::unordered_map<const ir::ExprNode*, std::vector<const ir::CallNode*>> readers;
    const std::vector<ir::Expr> nodes = ir::post_order(fn.body);
    for (const ir::Expr& e : nodes)
      for (const ir::Expr& a : ir::node_inputs(e))
        if (auto* c = e->as<ir::CallNode>()) readers[a.get()].push_back(c);
    std::unordered_set<const ir::ExprNode*> results{fn.body.get()};
    if (auto* t = fn.body->as<ir::TupleNode>())
      for (const ir::Expr& f : t->fields) results.insert(f.get());
    auto fused_gelu = [&](const ir::Expr& gemm) {
      auto it = readers.find(gemm.get());
      return !results.count(gemm.get()) && it != readers.end() && it->second.size() == 1 && is_gelu(*it->second[0]);
    };
    int site = 0;
    for (const ir::Expr& e : nodes) {
      if (e->kind == ir::ExprKind::Var) continue;
      if (auto* t = e->as<ir::TupleNode>()) {
        std::vector<te::Tensor> fs;
        for (const ir::Expr& f : t->fields) fs.push_back(value.at(f.get()).at(0));
        value[e.get()] = fs;
        continue;
      }
      if (auto* g = e->as<ir::TupleGetItemNode>()) {
        value[e.get()] = {value.at(g->tuple.get()).at(static_cast<size_t>(g->index))};
        continue;
      }
      auto* c = e->as<ir::CallNode>();
      if (!c) continue;  // the composite's function node
      if (is_gelu(*c)) {
        const ir::Expr& x = c->args.at(0);
        const te::Tensor in = value.at(x.get()).at(0);
        if (fused_gelu(x)) {
          value[e.get()] = {in};  // computed by the GEMM's epilogue
          continue;
        }
        // Not fusable (the GEMM's value is read elsewhere too): elementwise, as nn.gelu's compute.
        value[e.get()] = {te::compute(in.shape(), [&](const std::vector<tir::Expr>& i) {
          tir::Expr v = in(i);
          return tir::float_imm(0.5) * v * (tir::float_imm(1.0) + tir::call("erf", DType::f32, {v * tir::float_imm(0.70710678118654752)}));
        }, numbered("gelu", site))};
        continue;
      }
      auto* comp = c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
      auto kind = comp ? comp->attrs.find("Composite") : ir::FuncAttrs::const_iterator();
      if (!comp || kind == comp->attrs.end() || kind->second.rfind("libxsmm.gemm", 0) != 0)
        throw Error("libxsmm: the region holds " + (c->is_op() ? ops::op_name(c->op) : std::string("a call")) +
                    ", which is not one of its GEMM composites");
      // The composite's parameters are the call's arguments.
      std::unordered_map<const ir::ExprNode*, te::Tensor> inner;
      for (size_t i = 0; i < comp->params.size(); ++i) inner[comp->params[i].get()] = value.at(c->args[i].get()).at(0);
      GemmParts p = parts_of(comp->body);
      SY_CHECK(p.gemm) << "libxsmm composite without a GEMM";
      if (p.act == Epilogue::None && fused_gelu(e)) p.act = Epilogue::GeluErf;
      const bool dense = p.gemm->op == OpCode::Dense;
      std::vector<te::Tensor> in;
      in.reserve(3);
      in.push_back(inner.at(p.gemm->args[0].get()));
      in.push_back(inner.at(p.gemm->args[1].get()));
      if (p.bias) {
        te::Tensor b = inner.at(p.bias.get());
        if (b.shape().size() != 1) {  // [1, .., 1, N] read as [N]
          const int64_t n = b.shape().back();
          const size_t r = b.shape().size();
          b = te::compute({n}, [&](const std::vector<tir::Expr>& i) {
            std::vector<tir::Expr> at(r - 1, tir::int_imm(0));
            at.push_back(i[0]);
            return b(at);
          }, numbered("bias", site));
        }
        in.push_back(b);
      }
      const Shape& out = ir::as_tensor(e->type).shape;
      value[e.get()] = {te::stateful_extern_op(numbered("gemm", site++), out, DType::f32, in, libxsmm::kGemmExtern,
                                               {static_cast<int64_t>(dense ? GemmMode::Dense : GemmMode::MatMul),
                                                static_cast<int64_t>(p.act), p.bias ? 1 : 0})};
    }
    std::vector<te::Tensor> outputs = value.at(fn.body.get());
    te::Schedule sch(outputs);
    std::vector<te::Tensor> all = args;
    all.insert(all.end(), outputs.begin(), outputs.end());
    return te::lower(sch, all, name);
  }
};

class LibxsmmBackend : public Backend {
 public:
  std::string name() const override { return "libxsmm"; }
  std::string description() const override {
    return "libxsmm's JIT small-GEMM kernels for dense/matmul (+bias, relu, gelu, erf-gelu), lowered into the native kernels by a target hook";
  }
  std::vector<CompositeRule> composite_rules() const override { return gemm_rules(); }
  Verdict supports_op(const ir::CallNode& call) const override {
    return Verdict::no("libxsmm: takes only its GEMM composites, not a lone " + ops::op_name(call.op));
  }
  Verdict worth_offloading(const RegionSummary& region) const override {
    return region.flops > 0 ? Verdict::yes() : Verdict::no("libxsmm: no GEMM in the region");
  }
  std::unique_ptr<RuntimeModule> compile(const std::vector<ExternFunction>&, const target::Target&) const override {
    throw Error("libxsmm has no runtime module: its regions are lowered into the native kernels by its target hook");
  }
  std::unique_ptr<RuntimeModule> load(const std::string&, const std::vector<ExternFunction>&) const override {
    throw Error("libxsmm has no runtime module: an artifact holds its kernels in the native library");
  }
  const LoweringHook* lowering_hook() const override { return &hook_; }

 private:
  GemmHook hook_;
};

}  // namespace

void register_libxsmm_backend(BackendRegistry& registry) {
  libxsmm::register_gemm_extern();
  registry.add(std::make_unique<LibxsmmBackend>());
}

}  // namespace sy::backends
