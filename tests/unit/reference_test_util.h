// Helpers for the reference kernel tests: build tensors, run one op through eval_op with an
// explicit output type, and compare results with expected values.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/reference/kernels.h"
#include "ir/type.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/tensor.h"

namespace sy::reftest {

inline Tensor f32(Shape s, std::vector<float> v) { return Tensor::from_vector<float>(std::move(s), v); }
inline Tensor i64(Shape s, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(std::move(s), v); }
inline Tensor i32(Shape s, std::vector<int32_t> v) { return Tensor::from_vector<int32_t>(std::move(s), v); }
inline Tensor iota_f32(Shape s, float start = 0.0f) {
  Tensor t(DType::f32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

// Runs a tensor-typed op; out_shape/out_dtype give the type a relation would infer.
template <typename A = ir::NoAttrs>
Tensor run(ops::OpCode op, std::vector<Tensor> args, Shape out_shape, DType out_dtype = DType::f32, A attrs = A{}) {
  std::vector<Tensor> outs = reference::eval_op(op, attrs, args, ir::tensor_type(std::move(out_shape), out_dtype));
  EXPECT_EQ(outs.size(), 1u);
  return outs.at(0);
}

// Runs a tuple-typed op (split, topk).
template <typename A>
std::vector<Tensor> run_tuple(ops::OpCode op, std::vector<Tensor> args, std::vector<ir::Type> fields, A attrs) {
  return reference::eval_op(op, attrs, args, ir::tuple_type(std::move(fields)));
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_as_double(i));
  return v;
}

// Element-wise comparison with a relative/absolute tolerance; NaN matches NaN.
inline void expect_near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-5) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expected.size())) << "shape " << shape_str(t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double got = t.get_as_double(i), want = expected[static_cast<size_t>(i)];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want NaN";
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << "element " << i;
    } else {
      EXPECT_NEAR(got, want, tol * std::max(1.0, std::abs(want))) << "element " << i;
    }
  }
}

}  // namespace sy::reftest
