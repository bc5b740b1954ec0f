// Native test helpers.
#include "ops/op.h"
#include "support/numbered.h"
#include "native_op_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backends/reference/executor.h"
#include "codegen/c/build.h"
#include "ir/printer.h"
#include "native/lower_function.h"
#include "topi/topi.h"

namespace sy::testing {

std::vector<Tensor> run_native_function(const ir::Expr& fn_expr, const std::vector<Tensor>& inputs) {
  auto* fn = fn_expr->as<ir::FunctionNode>();
  tir::PrimFunc f = native::lower_function(*fn, "kernel");
  codegen::BuildOptions bo;
  bo.externs = topi::extern_table();
  std::shared_ptr<codegen::Module> mod = codegen::build({f}, bo);
  std::vector<Tensor> outs;
  const ir::Type& rt = fn->ret_type();
  std::vector<ir::Type> out_types = ir::is_tensor(rt) ? std::vector<ir::Type>{rt} : rt->fields;
  std::vector<void*> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(const_cast<void*>(t.raw()));
  for (const ir::Type& t : out_types) {
    outs.emplace_back(ir::as_tensor(t).dtype, ir::as_tensor(t).shape);
    ptrs.push_back(outs.back().raw());
  }
  mod->call("kernel", ptrs);
  return outs;
}

std::vector<Tensor> run_native_op(ops::OpCode op, const ir::AttrsPtr& attrs, const std::vector<Tensor>& inputs) {
  std::vector<ir::Expr> params;
  for (size_t i = 0; i < inputs.size(); ++i)
    params.push_back(ir::var(numbered("p", static_cast<int64_t>(i)), ir::tensor_type(inputs[i].shape(), inputs[i].dtype())));
  ir::Expr body = ir::call(op, params, attrs);
  return run_native_function(ir::function(params, body, {{"Primitive", "1"}}), inputs);
}

void expect_native_matches_reference(ops::OpCode op, const ir::AttrsPtr& attrs, const std::vector<Tensor>& inputs,
                                     double rtol, double atol) {
  std::vector<ir::Expr> params;
  for (size_t i = 0; i < inputs.size(); ++i)
    params.push_back(ir::var(numbered("p", static_cast<int64_t>(i)), ir::tensor_type(inputs[i].shape(), inputs[i].dtype())));
  ir::Expr body = ir::call(op, params, attrs);
  ir::Module m;
  m.functions["main"] = ir::function(params, body);
  std::vector<Tensor> want = reference::run_module(m, inputs).value();
  std::vector<Tensor> got = run_native_function(ir::function(params, body, {{"Primitive", "1"}}), inputs);
  ASSERT_EQ(got.size(), want.size()) << ops::op_name(op);
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].dtype(), want[k].dtype()) << ops::op_name(op) << " output " << k;
    ASSERT_EQ(got[k].shape(), want[k].shape()) << ops::op_name(op) << " output " << k;
    int bad = 0;
    dispatch_dtype(want[k].dtype(), [&]<typename T>(T) {
      const T* g = got[k].data<T>();
      const T* w = want[k].data<T>();
      for (int64_t i = 0; i < want[k].numel() && bad < 5; ++i) {
        double gv = static_cast<double>(g[i]), wv = static_cast<double>(w[i]);
        bool ok = std::isnan(wv) ? std::isnan(gv) : std::fabs(gv - wv) <= atol + rtol * std::fabs(wv);
        if (!ok) {
          ++bad;
          ADD_FAILURE() << ops::op_name(op) << " output " << k << " element " << i << ": native " << gv
                        << ", reference " << wv;
        }
      }
    });
  }
}

void expect_native_cases_match_reference(const std::vector<NativeCase>& cases) {
  struct Prepared {
    std::vector<Tensor> want;
    std::vector<ir::Type> out_types;
    std::string name, what;
  };
  std::vector<Prepared> prep;
  std::vector<tir::PrimFunc> funcs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const NativeCase& k = cases[c];
    Prepared p;
    p.name = "case" + std::to_string(c);
    p.what = "case " + std::to_string(c) + " (" + ops::op_name(k.op) + (k.label.empty() ? "" : ", " + k.label) + ")";
    std::vector<ir::Expr> params;
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      params.push_back(ir::var(numbered("p", static_cast<int64_t>(i)), ir::tensor_type(k.inputs[i].shape(), k.inputs[i].dtype())));
      p.what += std::string(i ? ", " : " on ") + std::string(dtype_name(k.inputs[i].dtype())) + shape_str(k.inputs[i].shape());
    }
    ir::Expr body = ir::call(k.op, params, k.attrs);
    ir::Module m;
    m.functions["main"] = ir::function(params, body);
    auto ref = reference::run_module(m, k.inputs);
    ASSERT_TRUE(ref.is_ok()) << p.what << ": reference failed: " << ref.status().message();
    p.want = ref.value();
    ir::Expr fn = ir::function(params, body, {{"Primitive", "1"}});
    const ir::Type& rt = fn->as<ir::FunctionNode>()->ret_type();
    p.out_types = ir::is_tensor(rt) ? std::vector<ir::Type>{rt} : rt->fields;
    funcs.push_back(native::lower_function(*fn->as<ir::FunctionNode>(), p.name));
    prep.push_back(std::move(p));
  }
  codegen::BuildOptions bo;
  bo.externs = topi::extern_table();
  std::shared_ptr<codegen::Module> mod = codegen::build(funcs, bo);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Prepared& p = prep[c];
    std::vector<Tensor> got;
    std::vector<void*> ptrs;
    for (const Tensor& t : cases[c].inputs) ptrs.push_back(const_cast<void*>(t.raw()));
    for (const ir::Type& t : p.out_types) {
      got.emplace_back(ir::as_tensor(t).dtype, ir::as_tensor(t).shape);
      ptrs.push_back(got.back().raw());
    }
    mod->call(p.name, ptrs);
    ASSERT_EQ(got.size(), p.want.size()) << p.what;
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].dtype(), p.want[k].dtype()) << p.what << " output " << k;
      ASSERT_EQ(got[k].shape(), p.want[k].shape()) << p.what << " output " << k;
      int bad = 0;
      dispatch_dtype(p.want[k].dtype(), [&]<typename T>(T) {
        const T* g = got[k].data<T>();
        const T* w = p.want[k].data<T>();
        for (int64_t i = 0; i < p.want[k].numel() && bad < 5; ++i) {
          const double gv = static_cast<double>(g[i]), wv = static_cast<double>(w[i]);
          bool ok;
          if (std::isnan(wv)) ok = std::isnan(gv);
          else if (std::isinf(wv)) ok = gv == wv;
          else ok = std::fabs(gv - wv) <= cases[c].atol + cases[c].rtol * std::fabs(wv);
          if (!ok) {
            ++bad;
            ADD_FAILURE() << p.what << " output " << k << " element " << i << ": native " << gv << ", reference " << wv;
          }
        }
      });
    }
  }
}

}  // namespace sy::testing
