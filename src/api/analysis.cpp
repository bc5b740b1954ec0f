// Op histogram, parameter count and FLOP count of a module (rules in analysis.h).
#include "api/analysis.h"

#include <unordered_set>

#include "ir/visitor.h"
#include "ops/attrs.h"
#include "support/error.h"

namespace sy::api {
namespace {

using ops::OpCode;

int64_t numel_of(const ir::Type& t) {
  if (!t) return 0;
  if (t->kind == ir::TypeKind::Tensor) return shape_numel(t->shape);
  int64_t n = 0;
  if (t->kind == ir::TypeKind::Tuple)
    for (const auto& f : t->fields) n += numel_of(f);
  return n;
}

void flatten_types(const ir::Type& t, std::vector<ir::Type>& out) {
  if (t->kind == ir::TypeKind::Tuple) {
    for (const auto& f : t->fields) flatten_types(f, out);
  } else {
    out.push_back(t);
  }
}

const Shape& arg_shape(const ir::CallNode& c, size_t i) { return ir::shape_of(c.args.at(i)); }

class Analyzer {
 public:
  Analyzer(const ir::Module& m, ModelStats& st) : m_(m), st_(st) {}

  void walk(const ir::Expr& body, int depth) {
    if (depth > 64) throw Error("function calls nested more than 64 deep (recursive module?)");
    for (const ir::Expr& e : ir::post_order(body)) {
      if (auto* k = e->as<ir::ConstantNode>()) {
        if (seen_.insert(k).second) constants_.push_back(k);
        continue;
      }
      auto* c = e->as<ir::CallNode>();
      if (!c) continue;
      if (!c->is_op()) {
        walk(callee_body(*c), depth + 1);
        continue;
      }
      const std::string& name = ops::op_name(c->op);
      int64_t f = op_flops(*c);
      st_.op_histogram[name]++;
      st_.num_ops++;
      st_.flops += f;
      Shape out = c->type->kind == ir::TypeKind::Tensor ? c->type->shape : Shape{};
      st_.nodes.push_back({name, out, f});
      if (c->op == OpCode::BatchNorm && c->args.size() == 5) {
        statistics_.insert(c->args[3].get());
        statistics_.insert(c->args[4].get());
      }
    }
  }

  void count_params() {
    for (const ir::ConstantNode* k : constants_) {
      if (!is_float(k->value.dtype()) || k->value.ndim() == 0 || statistics_.count(k)) continue;
      st_.params += k->value.numel();
      st_.param_bytes += static_cast<int64_t>(k->value.nbytes());
    }
  }

 private:
  ir::Expr callee_body(const ir::CallNode& c) {
    if (auto* f = c.callee->as<ir::FunctionNode>()) return f->body;
    if (auto* g = c.callee->as<ir::GlobalVarNode>()) {
      auto it = m_.functions.find(g->name);
      if (it == m_.functions.end()) throw Error("call of unknown function @" + g->name);
      auto* f = it->second->as<ir::FunctionNode>();
      SY_CHECK(f) << "@" << g->name << " is not a function";
      return f->body;
    }
    throw Error("call of a callee that is neither a function nor a global function");
  }

  const ir::Module& m_;
  ModelStats& st_;
  std::unordered_set<const ir::ExprNode*> seen_;
  std::vector<const ir::ConstantNode*> constants_;
  std::unordered_set<const ir::ExprNode*> statistics_;
};

}  // namespace

int64_t op_flops(const ir::CallNode& c) {
  SY_CHECK(c.is_op()) << "op_flops of a function call";
  int64_t out = numel_of(c.type);
  switch (c.op) {
    case OpCode::Conv2d: {
      const Shape& w = arg_shape(c, 1);  // OIHW: I is already Cin / groups
      return 2 * out * w[1] * w[2] * w[3];
    }
    case OpCode::ConvTranspose2d: {
      const Shape& x = arg_shape(c, 0);
      const Shape& w = arg_shape(c, 1);  // IOHW: O is Cout / groups
      return 2 * shape_numel(x) * w[1] * w[2] * w[3];
    }
    case OpCode::MatMul: {
      const Shape& a = arg_shape(c, 0);
      return 2 * out * (a.empty() ? 1 : a.back());
    }
    case OpCode::Dense: return 2 * out * arg_shape(c, 0).back();
    case OpCode::BatchNorm: return 2 * out;
    case OpCode::LayerNorm:
    case OpCode::InstanceNorm: return 5 * out;
    case OpCode::Softmax:
    case OpCode::LogSoftmax: return 3 * out;
    case OpCode::LRN: return 2 * c.attrs_as<ops::LRNAttrs>().size * out;
    case OpCode::MaxPool2d:
    case OpCode::AvgPool2d:
    case OpCode::LpPool2d: {
      const auto& a = c.attrs_as<ops::Pool2dAttrs>();
      int64_t window = 1;
      for (int64_t k : a.kernel) window *= k;
      return out * window;
    }
    case OpCode::GlobalAvgPool2d:
    case OpCode::GlobalMaxPool2d:
    case OpCode::CumSum:
      return shape_numel(arg_shape(c, 0));
    case OpCode::Identity: return 0;
    case OpCode::Resize2d: return out;
    default: break;
  }
  switch (ops::op_def(c.op).kind) {
    case ops::OpKind::Elemwise:
    case ops::OpKind::Broadcast: return out;
    case ops::OpKind::Reduce: return shape_numel(arg_shape(c, 0));  // reductions, argmax/argmin
    default: break;
  }
  if (c.op == OpCode::TopK) return shape_numel(arg_shape(c, 0));
  return 0;  // data movement and the remaining opaque ops (scatter)
}

std::vector<ir::Type> output_types(const ir::Module& m) {
  std::vector<ir::Type> out;
  flatten_types(m.main().ret_type(), out);
  return out;
}

std::vector<std::string> output_names(const ir::Module& m) {
  size_t n = output_types(m).size();
  if (m.output_names.size() == n) return m.output_names;
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("output" + std::to_string(i));
  return names;
}

ModelStats analyze(const ir::Module& m) {
  ModelStats st;
  const ir::FunctionNode& main = m.main();
  for (const auto& p : main.params) {
    const auto* v = p->as<ir::VarNode>();
    SY_CHECK(v) << "parameter is not a var";
    TensorInfo ti{v->name, {}, DType::f32};
    if (ir::is_tensor(v->type)) {
      ti.shape = v->type->shape;
      ti.dtype = v->type->dtype;
    }
    st.inputs.push_back(ti);
  }
  auto types = output_types(m);
  auto names = output_names(m);
  for (size_t i = 0; i < types.size(); ++i) {
    TensorInfo ti{names[i], {}, DType::f32};
    if (ir::is_tensor(types[i])) {
      ti.shape = types[i]->shape;
      ti.dtype = types[i]->dtype;
    }
    st.outputs.push_back(ti);
  }
  Analyzer a(m, st);
  a.walk(main.body, 0);
  a.count_params();
  return st;
}

}  // namespace sy::api
