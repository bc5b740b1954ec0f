// topi reductions (sum, mean, max, min, prod, l1, l2, sum-square, log-sum, log-sum-exp),
// argmax/argmin and topk run as generated C and compared with the reference kernels: every axis
// combination class (innermost, outer, several, all, none), keepdims, every numeric dtype, NaN.
#include <gtest/gtest.h>

#include <limits>

#include "native/compile.h"
#include "native_op_test_util.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "topi_test_data.h"

using namespace sy;
using namespace sy::testing;
using namespace sy::topitest;
using ops::OpCode;

namespace {

template <typename A>
ir::AttrsPtr attrs(A a) {
  return std::make_shared<A>(std::move(a));
}

ir::AttrsPtr reduce_attrs(std::vector<int64_t> axes, bool keepdims) {
  ops::ReduceAttrs a;
  a.axes = std::move(axes);
  a.keepdims = keepdims;
  return attrs(a);
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

const OpCode kReduceOps[] = {OpCode::ReduceSum, OpCode::ReduceMean,      OpCode::ReduceMax,
                             OpCode::ReduceMin, OpCode::ReduceProd,      OpCode::ReduceL1,
                             OpCode::ReduceL2,  OpCode::ReduceSumSquare, OpCode::ReduceLogSum,
                             OpCode::ReduceLogSumExp};

}  // namespace

TEST(TopiReduce, EveryOpAxesAndKeepdims) {
  // Innermost axis, outer axes (vectorized over the contiguous data axis), several axes, all,
  // none; shapes with vector tails.
  const std::vector<std::vector<int64_t>> axes_list = {{2}, {0}, {1}, {0, 2}, {0, 1, 2}, {}};
  std::vector<NativeCase> cases;
  uint32_t seed = 1;
  for (OpCode op : kReduceOps) {
    // Positive data so that log-sum is defined; prod of values near 1 stays finite.
    const double lo = op == OpCode::ReduceProd ? 0.5 : 0.1, hi = op == OpCode::ReduceProd ? 1.5 : 2.0;
    for (const auto& axes : axes_list) {
      for (bool keep : {true, false}) {
        cases.push_back({op, reduce_attrs(axes, keep), {random(DType::f32, {3, 5, 19}, lo, hi, seed++)}, 1e-5, 1e-6});
      }
      cases.push_back({op, reduce_attrs(axes, true), {random(DType::f64, {2, 3, 33}, lo, hi, seed++)}, 1e-12, 1e-12});
    }
    cases.push_back({op, reduce_attrs({0}, false), {random(DType::f32, {7, 40}, lo, hi, seed++)}});
    cases.push_back({op, reduce_attrs({0}, false), {random(DType::f32, {5}, lo, hi, seed++)}});
  }
  expect_native_cases_match_reference(cases);
}

TEST(TopiReduce, IntegerDtypes) {
  std::vector<NativeCase> cases;
  uint32_t seed = 100;
  for (DType t : kNumeric) {
    if (is_float(t)) continue;
    for (OpCode op : kReduceOps) {
      // Sums wrap in T; the double-accumulated ops convert back with truncation.
      const double lo = op == OpCode::ReduceProd ? -3 : (t == DType::u8 ? 0 : -40);
      const double hi = op == OpCode::ReduceProd ? 3 : 40;
      cases.push_back({op, reduce_attrs({1}, true), {random(t, {3, 17}, op == OpCode::ReduceLogSum ? 1 : lo, hi, seed++)}});
      cases.push_back({op, reduce_attrs({0}, false), {random(t, {4, 18}, op == OpCode::ReduceLogSum ? 1 : lo, hi, seed++)}});
    }
  }
  // int8 sums wrap around.
  cases.push_back({OpCode::ReduceSum, reduce_attrs({0}, false), {values(DType::i8, {3, 2}, {100, -100, 100, -100, 100, -100})}});
  expect_native_cases_match_reference(cases);
}

TEST(TopiReduce, NanAndInfinities) {
  std::vector<NativeCase> cases;
  // Rows: ordinary; with NaN; with +inf; with -inf; all -inf; NaN and inf.
  const std::vector<double> rows = {1, 2, 3, 4,  1, kNaN, 3, 4,  1, kInf, 3, 4,
                                    1, -kInf, 3, 4,  -kInf, -kInf, -kInf, -kInf,  kNaN, kInf, -kInf, 2};
  for (DType t : kFloats) {
    for (OpCode op : kReduceOps) {
      if (op == OpCode::ReduceLogSum) continue;  // log of negative sums: NaN either way, covered above
      cases.push_back({op, reduce_attrs({1}, false), {values(t, {6, 4}, rows)}});
    }
    for (bool last : {false, true}) {
      for (OpCode op : {OpCode::ArgMax, OpCode::ArgMin}) {
        ops::ArgReduceAttrs a;
        a.axis = 1;
        a.select_last_index = last;
        cases.push_back({op, attrs(a), {values(t, {6, 4}, rows)}});
      }
    }
  }
  expect_native_cases_match_reference(cases);
}

TEST(TopiReduce, ArgMaxArgMin) {
  std::vector<NativeCase> cases;
  uint32_t seed = 200;
  for (DType t : kNumeric) {
    for (OpCode op : {OpCode::ArgMax, OpCode::ArgMin}) {
      for (int64_t axis : {0, 1, 2}) {
        for (bool keep : {true, false}) {
          for (bool last : {false, true}) {
            ops::ArgReduceAttrs a;
            a.axis = axis;
            a.keepdims = keep;
            a.select_last_index = last;
            // A small value range makes ties, so first/last index matters.
            cases.push_back({op, attrs(a), {random(t, {3, 4, 17}, 0, 3, seed++)}});
          }
        }
      }
    }
  }
  ops::ArgReduceAttrs a;
  a.axis = 0;
  cases.push_back({OpCode::ArgMax, attrs(a), {random(DType::f32, {37}, -1, 1, seed++)}});
  expect_native_cases_match_reference(cases);
}

TEST(TopiReduce, TopK) {
  std::vector<NativeCase> cases;
  uint32_t seed = 300;
  for (DType t : kNumeric) {
    for (bool largest : {true, false}) {
      for (int64_t axis : {0, 1}) {
        ops::TopKAttrs a;
        a.axis = axis;
        a.k = 3;
        a.largest = largest;
        // Ties (small range) keep the lower index first.
        cases.push_back({OpCode::TopK, attrs(a), {random(t, {4, 17}, 0, 5, seed++)}});
      }
    }
  }
  ops::TopKAttrs a;
  a.axis = 1;
  a.k = 4;
  cases.push_back({OpCode::TopK, attrs(a), {values(DType::f32, {2, 5}, {1, kNaN, 3, kInf, -kInf, 2, 2, kNaN, 0, 5})}});
  a.k = 17;
  a.axis = 0;
  cases.push_back({OpCode::TopK, attrs(a), {random(DType::f32, {17}, -1, 1, seed++)}});
  expect_native_cases_match_reference(cases);
}

// A row's sum over the contiguous axis is a SIMD reduction (lanes of partial sums), not one
// serial chain of dependent double adds, which cost a layer norm of the encoder 4x its time.
// Values with NaN and infinities at every lane position, rows with a vector tail.
TEST(TopiReduce, ContiguousRowsAreSimdReductions) {
  ir::Expr x = ir::var("x", ir::tensor_type({6, 200}, DType::f32));
  ops::ReduceAttrs a;
  a.axes = {1};
  a.keepdims = true;
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(OpCode::Sub, {x, ir::call(OpCode::ReduceMean, {x}, a)}));
  native::Compiled nc = native::compile_native(m);
  EXPECT_NE(nc.generated_c.find("#pragma omp simd reduction(+:"), std::string::npos) << nc.generated_c;

  std::vector<NativeCase> cases;
  uint32_t seed = 300;
  for (OpCode op : kReduceOps) {
    const double lo = op == OpCode::ReduceProd ? 0.9 : 0.1, hi = op == OpCode::ReduceProd ? 1.1 : 2.0;
    Tensor t = random(DType::f32, {5, 37}, lo, hi, seed++);
    if (op != OpCode::ReduceLogSum && op != OpCode::ReduceProd) {
      t.data<float>()[1 * 37 + 17] = static_cast<float>(kNaN);   // a lane of the second vector
      t.data<float>()[2 * 37 + 36] = static_cast<float>(kInf);   // the tail
      t.data<float>()[3 * 37 + 0] = static_cast<float>(-kInf);   // the first lane
    }
    cases.push_back({op, reduce_attrs({1}, false), {t}});
    cases.push_back({op, reduce_attrs({1}, true), {random(DType::f64, {3, 70}, lo, hi, seed++)}, 1e-12, 1e-12});
  }
  expect_native_cases_match_reference(cases);
}
