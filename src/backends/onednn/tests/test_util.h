// Helpers for the oneDNN backend tests: IR construction shorthands, seeded data, running a region
// with the backend and with the reference executor, and comparing results.
#pragma once
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ops/op.h"
#include "target/host.h"
#include "support/numbered.h"
#include "backends/backend.h"
#include "backends/onednn/onednn_module.h"
#include "backends/reference/executor.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "ops/attrs.h"

namespace sy::onednn_test {

using ops::OpCode;

// Deterministic values in [lo, hi).
inline Tensor random(Shape s, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  Tensor t(DType::f32, std::move(s));
  uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  float* d = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    d[i] = lo + (hi - lo) * static_cast<float>((x >> 40) & 0xFFFFFF) / static_cast<float>(1 << 24);
  }
  return t;
}
inline ir::Expr cst(Shape s, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  return ir::constant(random(std::move(s), seed, lo, hi));
}
inline ir::Expr input(const std::string& name, Shape s) { return ir::var(name, ir::tensor_type(std::move(s), DType::f32)); }

// fn (fresh params) attrs {Composite=name} { build(params) }(args)
inline ir::Expr composite(const std::string& name, const std::vector<ir::Expr>& args,
                          const std::function<ir::Expr(const std::vector<ir::Expr>&)>& build) {
  std::vector<ir::Expr> params;
  for (size_t i = 0; i < args.size(); ++i) params.push_back(ir::var(numbered("p", static_cast<int64_t>(i)), args[i]->type));
  ir::Expr f = ir::function(params, build(params), {{"Composite", name}});
  return ir::call_function(f, args);
}

inline ir::Expr region(const std::vector<ir::Expr>& params, const ir::Expr& body) {
  return ir::function(params, body, {{"Compiler", "onednn"}, {"global_symbol", "onednn_0"}});
}

inline const backends::Backend& backend() { return backends::BackendRegistry::global().get("onednn"); }

inline std::vector<Tensor> run_reference(const ir::Expr& fn, const std::vector<Tensor>& inputs) {
  ir::Module m;
  m.functions["main"] = fn;
  reference::ExecOptions opts;
  opts.threads = 2;
  auto r = reference::run_module(m, inputs, opts);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r.value() : std::vector<Tensor>{};
}

inline std::vector<Tensor> run_onednn(const ir::Expr& fn, const std::vector<Tensor>& inputs, int threads = 2) {
  omp_set_num_threads(threads);
  auto mod = backend().compile({{"onednn_0", fn}}, target::host());
  return mod->run("onednn_0", inputs);
}

// max|a-b| / max(max|b|, 1e-30)
inline double rel_err(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    num = std::max(num, std::abs(a.get_as_double(i) - b.get_as_double(i)));
    den = std::max(den, std::abs(b.get_as_double(i)));
  }
  return num / std::max(den, 1e-30);
}

// Runs fn on both and expects every output within `tol` relative error.
inline void expect_matches_reference(const ir::Expr& fn, const std::vector<Tensor>& inputs, double tol = 1e-5) {
  std::vector<Tensor> want = run_reference(fn, inputs);
  std::vector<Tensor> got = run_onednn(fn, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
    EXPECT_LE(rel_err(got[i], want[i]), tol) << "output " << i;
  }
}

}  // namespace sy::onednn_test
