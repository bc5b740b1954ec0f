// Task extraction: plan the model as compile_native does and take one task per distinct kernel.
#include "tune/task.h"

#include <unordered_map>

#include "codegen/c/compiler.h"
#include "ir/attrs.h"
#include "ir/structural_equal.h"
#include "ir/type.h"
#include "ir/visitor.h"
#include "native/compile.h"
#include "native/plan.h"
#include "ops/flops.h"
#include "ops/op.h"
#include "strategy/strategy.h"
#include "support/error.h"
#include "topi/topi.h"

namespace sy::tune {

namespace {


// "%12" (GCC 12 warns falsely on "%" + std::to_string(...)).
std::string num(size_t i) {
  std::string s(1, '%');
  s += std::to_string(i);
  return s;
}


}  // namespace

std::string workload_key(const ir::FunctionNode& fn) {
  std::unordered_map<const ir::ExprNode*, size_t> id;
  for (size_t i = 0; i < fn.params.size(); ++i) id[fn.params[i].get()] = i;
  std::string text;
  for (const ir::Expr& p : fn.params) text += "param " + ir::type_str(p->type) + "\n";
  size_t next = fn.params.size();
  for (const ir::Expr& e : ir::post_order(fn.body)) {
    if (id.count(e.get())) continue;
    std::string line = num(next) + " = ";
    auto ref = [&](const ir::Expr& a) {
      auto it = id.find(a.get());
      SY_CHECK(it != id.end()) << "workload_key: an operand outside the function";
      return num(it->second);
    };
    if (auto* c = e->as<ir::CallNode>()) {
      SY_CHECK(c->is_op()) << "workload_key: a fused function calls only ops";
      line += ops::op_name(c->op) + "{" + (c->attrs ? ir::attrs_str(*c->attrs) : "") + "}(";
      for (size_t i = 0; i < c->args.size(); ++i) line += (i ? ", " : "") + ref(c->args[i]);
      line += ")";
    } else if (auto* t = e->as<ir::TupleNode>()) {
      line += "(";
      for (size_t i = 0; i < t->fields.size(); ++i) line += (i ? ", " : "") + ref(t->fields[i]);
      line += ")";
    } else if (auto* g = e->as<ir::TupleGetItemNode>()) {
      line += ref(g->tuple) + "." + std::to_string(g->index);
    } else {
      throw Error("workload_key: unexpected node in a fused function");
    }
    text += line + " : " + ir::type_str(e->type) + "\n";
    id[e.get()] = next++;
  }
  text += "return " + num(id.at(fn.body.get())) + "\n";
  // The compiler cache's content hash: stable across processes, builds and machines.
  return codegen::content_hash(text).substr(0, 16);
}

std::vector<Task> extract_tasks(const ir::Module& m, const target::Target& t) {
  ir::Module fused = native::fuse_for_native(m);
  ir::Module packed = topi::prepack_constants(fused, t);
  native::Plan plan = native::plan_module(packed);
  std::vector<const ir::CallNode*> fcalls = native::primitive_calls(fused), pcalls = native::primitive_calls(packed);
  SY_CHECK(fcalls.size() == pcalls.size()) << "prepacking changed the calls";
  std::vector<Task> tasks(plan.kernels.size());
  std::vector<bool> made(plan.kernels.size(), false);
  std::unordered_map<size_t, std::vector<size_t>> by_hash;
  for (size_t k = 0; k < plan.kernels.size(); ++k) by_hash[ir::structural_hash(plan.kernels[k])].push_back(k);
  for (size_t i = 0; i < pcalls.size(); ++i) {
    size_t k = SIZE_MAX;
    for (size_t cand : by_hash[ir::structural_hash(pcalls[i]->callee)])
      if (ir::structural_equal(plan.kernels[cand], pcalls[i]->callee)) k = cand;
    if (k == SIZE_MAX) continue;
    Task& task = tasks[k];
    ++task.uses;
    if (made[k]) continue;
    made[k] = true;
    const auto* pfn = plan.kernels[k]->as<ir::FunctionNode>();
    const auto* ffn = fcalls[i]->callee->as<ir::FunctionNode>();
    if (pfn->attrs.count(native::kLoweredByAttr)) continue;  // a target hook's kernel: nothing to tune
    task.key = workload_key(*pfn);
    task.planned = plan.kernels[k];
    const ir::CallNode* anchor = strategy::anchor_of(*pfn);
    const ir::CallNode* plain_anchor = strategy::anchor_of(*ffn);
    task.description = strategy::describe_group(*pfn);
    task.op = anchor ? ops::op_name(anchor->op) : "";
    task.flops = plain_anchor ? ops::op_flops(*plain_anchor) : 0;
    if (anchor)
      for (const auto& e : strategy::applicable(*anchor, t).entries) task.implementations.push_back(e.impl->name);
    // The one-call module: constants stay (prepacking packs them as in the model), the rest
    // become its inputs.
    std::vector<ir::Expr> params, args;
    for (const ir::Expr& a : fcalls[i]->args) {
      if (a->as<ir::ConstantNode>()) {
        args.push_back(a);
      } else {
        params.push_back(ir::var("in" + std::to_string(params.size()), a->type));
        args.push_back(params.back());
      }
    }
    task.module.functions["main"] = ir::function(params, ir::call_function(fcalls[i]->callee, args));
  }
  std::vector<Task> out;
  for (size_t k = 0; k < tasks.size(); ++k)
    if (made[k] && !tasks[k].implementations.empty() && !plan.kernels[k]->as<ir::FunctionNode>()->attrs.count(native::kFallbackAttr) &&
        !plan.kernels[k]->as<ir::FunctionNode>()->attrs.count(native::kLoweredByAttr))
      out.push_back(std::move(tasks[k]));
  return out;
}

}  // namespace sy::tune
