// Op histogram, parameter count and FLOP count of a module (rules in analysis.h).
#include "api/analysis.h"

#include <unordered_set>

#include "ir/visitor.h"
#include "ops/flops.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::api {
namespace {

using ops::OpCode;

void flatten_types(const ir::Type& t, std::vector<ir::Type>& out) {
  if (t->kind == ir::TypeKind::Tuple) {
    for (const auto& f : t->fields) flatten_types(f, out);
  } else {
    out.push_back(t);
  }
}

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
      int64_t f = ops::op_flops(*c);
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
