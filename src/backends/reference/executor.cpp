// The reference executor: interprets @main node by node with the reference kernels, freeing each
// intermediate tensor as soon as its last user has run.
#include "backends/reference/executor.h"

#include <omp.h>

#include <sstream>
#include <unordered_map>

#include "backends/reference/kernels.h"
#include "ir/visitor.h"
#include "ops/op.h"

namespace sy::reference {
namespace {

// A runtime value: a tensor or a (possibly nested) tuple of values.
struct Value {
  Tensor tensor;
  std::vector<Value> fields;
  bool is_tuple = false;
};

void flatten(const Value& v, std::vector<Tensor>& out) {
  if (!v.is_tuple) {
    out.push_back(v.tensor);
    return;
  }
  for (const Value& f : v.fields) flatten(f, out);
}

class Interpreter {
 public:
  Interpreter(const ir::Module& m, const ExternalCall& external) : m_(m), external_(external) {}

  Value call(const ir::FunctionNode& f, std::vector<Value> args) {
    SY_CHECK(args.size() == f.params.size()) << "function called with " << args.size() << " arguments for "
                                             << f.params.size() << " parameters";
    const std::vector<ir::Expr> order = ir::post_order(f.body);
    // Remaining uses of each node; a value is dropped when its count reaches zero.
    std::unordered_map<const ir::ExprNode*, int> uses;
    for (const ir::Expr& e : order)
      for (const ir::Expr& in : ir::node_inputs(e)) ++uses[in.get()];
    ++uses[f.body.get()];  // the result itself
    std::unordered_map<const ir::ExprNode*, Value> env;
    for (size_t i = 0; i < args.size(); ++i) env[f.params[i].get()] = std::move(args[i]);

    for (const ir::Expr& e : order) {
      if (e->kind != ir::ExprKind::Var) env[e.get()] = eval(e, env);
      for (const ir::Expr& in : ir::node_inputs(e))
        if (--uses[in.get()] == 0) env.erase(in.get());
    }
    auto it = env.find(f.body.get());
    SY_CHECK(it != env.end()) << "function result was not computed";
    return std::move(it->second);
  }

 private:
  static const Value& lookup(const std::unordered_map<const ir::ExprNode*, Value>& env, const ir::Expr& e) {
    auto it = env.find(e.get());
    if (it == env.end()) {
      if (auto* v = e->as<ir::VarNode>()) throw Error("free variable '" + v->name + "' has no value");
      SY_CHECK(false) << "value used before it was computed";
    }
    return it->second;
  }

  Value eval(const ir::Expr& e, const std::unordered_map<const ir::ExprNode*, Value>& env) {
    switch (e->kind) {
      case ir::ExprKind::Var:
        return lookup(env, e);
      case ir::ExprKind::Constant: {
        Value v;
        v.tensor = e->as<ir::ConstantNode>()->value;
        return v;
      }
      case ir::ExprKind::GlobalVar:
      case ir::ExprKind::Function:
        // Only meaningful as callees, which are resolved when the call runs.
        return Value{};
      case ir::ExprKind::Tuple: {
        Value v;
        v.is_tuple = true;
        for (const ir::Expr& f : e->as<ir::TupleNode>()->fields) v.fields.push_back(lookup(env, f));
        return v;
      }
      case ir::ExprKind::TupleGetItem: {
        auto* t = e->as<ir::TupleGetItemNode>();
        const Value& tv = lookup(env, t->tuple);
        SY_CHECK(tv.is_tuple && t->index >= 0 && static_cast<size_t>(t->index) < tv.fields.size())
            << "tuple_get_item " << t->index << " of a non-tuple or out of range";
        return tv.fields[static_cast<size_t>(t->index)];
      }
      case ir::ExprKind::Call:
        return eval_call(e, env);
    }
    SY_CHECK(false) << "unknown expression kind";
    return Value{};
  }

  Value eval_call(const ir::Expr& e, const std::unordered_map<const ir::ExprNode*, Value>& env) {
    auto* c = e->as<ir::CallNode>();
    if (!c->is_op()) {
      const ir::FunctionNode* f = c->callee->as<ir::FunctionNode>();
      if (auto* gv = c->callee->as<ir::GlobalVarNode>()) {
        auto it = m_.functions.find(gv->name);
        if (it == m_.functions.end()) throw Error("call of unknown function @" + gv->name);
        f = it->second->as<ir::FunctionNode>();
        if (external_ && f->attrs.count("Compiler")) return call_external(gv->name, *f, c->args, env);
      }
      SY_CHECK(f) << "call of something that is not a function";
      std::vector<Value> args;
      for (const ir::Expr& a : c->args) args.push_back(lookup(env, a));
      return call(*f, std::move(args));
    }
    std::vector<Tensor> args;
    args.reserve(c->args.size());
    for (const ir::Expr& a : c->args) {
      const Value& v = lookup(env, a);
      SY_CHECK(!v.is_tuple) << ops::op_name(c->op) << ": tuple passed as an operator argument";
      args.push_back(v.tensor);
    }
    std::vector<Tensor> outs = eval_op(c->op, *c->attrs, args, e->type);
    Value v;
    if (e->type->kind == ir::TypeKind::Tuple) {
      SY_CHECK(outs.size() == e->type->fields.size()) << ops::op_name(c->op) << ": wrong number of results";
      v.is_tuple = true;
      for (size_t i = 0; i < outs.size(); ++i) {
        check_result(c->op, outs[i], e->type->fields[i]);
        Value f;
        f.tensor = std::move(outs[i]);
        v.fields.push_back(std::move(f));
      }
    } else {
      SY_CHECK(outs.size() == 1) << ops::op_name(c->op) << ": expected one result";
      check_result(c->op, outs[0], e->type);
      v.tensor = std::move(outs[0]);
    }
    return v;
  }

  Value call_external(const std::string& symbol, const ir::FunctionNode& f, const std::vector<ir::Expr>& arg_exprs,
                      const std::unordered_map<const ir::ExprNode*, Value>& env) {
    std::vector<Tensor> args;
    for (const ir::Expr& a : arg_exprs) {
      const Value& v = lookup(env, a);
      SY_CHECK(!v.is_tuple) << "@" << symbol << ": tuple passed to an external function";
      args.push_back(v.tensor);
    }
    std::vector<Tensor> outs = external_(symbol, args);
    const ir::Type& rt = f.ret_type();
    Value v;
    if (rt->kind == ir::TypeKind::Tuple) {
      SY_CHECK(outs.size() == rt->fields.size()) << "@" << symbol << " returned " << outs.size() << " results";
      v.is_tuple = true;
      for (Tensor& t : outs) {
        Value fv;
        fv.tensor = std::move(t);
        v.fields.push_back(std::move(fv));
      }
    } else {
      SY_CHECK(outs.size() == 1) << "@" << symbol << " returned " << outs.size() << " results";
      v.tensor = std::move(outs[0]);
    }
    return v;
  }

  // A kernel must produce exactly the type the relation inferred.
  static void check_result(ops::OpCode op, const Tensor& t, const ir::Type& type) {
    const ir::TypeNode& tt = ir::as_tensor(type);
    SY_CHECK(t.dtype() == tt.dtype && t.shape() == tt.shape)
        << ops::op_name(op) << ": kernel produced " << dtype_name(t.dtype()) << shape_str(t.shape())
        << ", type says " << ir::type_str(type);
  }

  const ir::Module& m_;
  const ExternalCall& external_;
};

std::string tensor_desc(const Tensor& t) { return ir::type_str(ir::tensor_type(t.shape(), t.dtype())); }

}  // namespace

Result<std::vector<Tensor>> run_module(const ir::Module& m, const std::vector<Tensor>& inputs, const ExecOptions& opts) {
  return catch_errors([&]() -> std::vector<Tensor> {
    if (!m.has("main")) throw Error("module has no @main function");
    const ir::FunctionNode& main = m.main();
    if (inputs.size() != main.params.size()) {
      std::ostringstream os;
      os << "@main expects " << main.params.size() << " input" << (main.params.size() == 1 ? "" : "s") << ", got "
         << inputs.size();
      throw Error(os.str());
    }
    std::vector<Value> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto* p = main.params[i]->as<ir::VarNode>();
      SY_CHECK(p) << "parameter " << i << " of @main is not a variable";
      const Tensor& in = inputs[i];
      if (p->type->kind != ir::TypeKind::Tensor)
        throw Error("input '" + p->name + "': parameters of type " + ir::type_str(p->type) + " are not supported");
      if (!in.defined())
        throw Error("input '" + p->name + "': tensor has no data");
      const ir::TypeNode& pt = ir::as_tensor(p->type);
      if (in.dtype() != pt.dtype || in.shape() != pt.shape)
        throw Error("input '" + p->name + "': expected " + ir::type_str(p->type) + ", got " + tensor_desc(in));
      Value v;
      v.tensor = in;
      args.push_back(std::move(v));
    }
    omp_set_num_threads(opts.threads > 0 ? opts.threads : omp_get_num_procs());
    Interpreter interp(m, opts.external);
    Value result = interp.call(main, std::move(args));
    std::vector<Tensor> outs;
    flatten(result, outs);
    return outs;
  });
}

}  // namespace sy::reference
