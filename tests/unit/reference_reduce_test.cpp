// Reference kernels: reductions, arg max/min, top-k and cumulative sum.
#include <limits>

#include "ops/op.h"
#include "reference_test_util.h"

using namespace sy;
using namespace sy::reftest;
using ops::OpCode;

namespace {
ops::ReduceAttrs axes(std::vector<int64_t> a, bool keepdims = true) {
  ops::ReduceAttrs r;
  r.axes = std::move(a);
  r.keepdims = keepdims;
  return r;
}
}  // namespace

TEST(ReferenceReduce, AllKinds) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_near(run(OpCode::ReduceSum, {x}, {2, 1}, DType::f32, axes({1})), {6, 15});
  expect_near(run(OpCode::ReduceSum, {x}, {3}, DType::f32, axes({0}, false)), {5, 7, 9});
  expect_near(run(OpCode::ReduceSum, {x}, {}, DType::f32, axes({0, 1}, false)), {21});
  expect_near(run(OpCode::ReduceMean, {x}, {2}, DType::f32, axes({1}, false)), {2, 5});
  expect_near(run(OpCode::ReduceMax, {x}, {1, 3}, DType::f32, axes({0})), {4, 5, 6});
  expect_near(run(OpCode::ReduceMin, {x}, {1, 3}, DType::f32, axes({0})), {1, 2, 3});
  expect_near(run(OpCode::ReduceProd, {x}, {2, 1}, DType::f32, axes({1})), {6, 120});
  Tensor y = f32({2, 2}, {-1, 2, 3, -4});
  expect_near(run(OpCode::ReduceL1, {y}, {2, 1}, DType::f32, axes({1})), {3, 7});
  expect_near(run(OpCode::ReduceL2, {y}, {1, 2}, DType::f32, axes({0})), {std::sqrt(10.0), std::sqrt(20.0)});
  expect_near(run(OpCode::ReduceSumSquare, {y}, {2, 1}, DType::f32, axes({1})), {5, 25});
  expect_near(run(OpCode::ReduceLogSum, {x}, {2, 1}, DType::f32, axes({1})), {std::log(6.0), std::log(15.0)});
  expect_near(run(OpCode::ReduceLogSumExp, {f32({2}, {1000, 1000})}, {1}, DType::f32, axes({0})),
              {1000 + std::log(2.0)});
  // No axes: each element is reduced on its own.
  expect_near(run(OpCode::ReduceL1, {y}, {2, 2}, DType::f32, axes({})), {1, 2, 3, 4});
}

TEST(ReferenceReduce, NonContiguousAxesAndInts) {
  // x[i, j, k] = 6i + 2j + k over [2, 3, 2]; reduce axes 0 and 2 -> per j: sum over i, k.
  Tensor x = iota_f32({2, 3, 2});
  expect_near(run(OpCode::ReduceSum, {x}, {1, 3, 1}, DType::f32, axes({0, 2})), {14, 22, 30});
  expect_near(run(OpCode::ReduceMax, {x}, {3}, DType::f32, axes({0, 2}, false)), {7, 9, 11});
  Tensor xi = i32({2, 2}, {2147483647, 1, -5, 3});
  expect_near(run(OpCode::ReduceSum, {xi}, {2}, DType::i32, axes({1}, false)), {-2147483648.0, -2});
  expect_near(run(OpCode::ReduceMin, {xi}, {2}, DType::i32, axes({0}, false)), {-5, 1});
}

TEST(ReferenceReduce, EmptyAndNaN) {
  Tensor e(DType::f32, {0, 2});
  expect_near(run(OpCode::ReduceSum, {e}, {1, 2}, DType::f32, axes({0})), {0, 0});
  expect_near(run(OpCode::ReduceProd, {e}, {1, 2}, DType::f32, axes({0})), {1, 1});
  expect_near(run(OpCode::ReduceMax, {e}, {1, 2}, DType::f32, axes({0})),
              {-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()});
  expect_near(run(OpCode::ReduceMax, {f32({3}, {1, NAN, 2})}, {1}, DType::f32, axes({0})),
              {std::numeric_limits<double>::quiet_NaN()});
}

TEST(ReferenceReduce, ArgMaxArgMin) {
  Tensor x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
  ops::ArgReduceAttrs a;
  a.axis = 1;
  Tensor y = run(OpCode::ArgMax, {x}, {2, 1}, DType::i64, a);
  EXPECT_EQ(y.dtype(), DType::i64);
  expect_near(y, {1, 0});
  a.select_last_index = true;
  expect_near(run(OpCode::ArgMax, {x}, {2, 1}, DType::i64, a), {2, 2});
  a.select_last_index = false;
  a.keepdims = false;
  expect_near(run(OpCode::ArgMin, {x}, {2}, DType::i64, a), {0, 1});
  a.axis = 0;
  expect_near(run(OpCode::ArgMin, {x}, {3}, DType::i64, a), {0, 1, 0});
  expect_near(run(OpCode::ArgMax, {f32({3}, {1, NAN, 3})}, {}, DType::i64, a), {1});
}

TEST(ReferenceReduce, TopK) {
  ops::TopKAttrs a;
  a.k = 2;
  a.axis = 0;
  auto types = std::vector<ir::Type>{ir::tensor_type({2}, DType::f32), ir::tensor_type({2}, DType::i64)};
  auto r = run_tuple(OpCode::TopK, {f32({4}, {1, 3, 2, 3})}, types, a);
  ASSERT_EQ(r.size(), 2u);
  expect_near(r[0], {3, 3});
  expect_near(r[1], {1, 3});  // ties: lower index first
  a.largest = false;
  r = run_tuple(OpCode::TopK, {f32({4}, {1, 3, 2, 3})}, types, a);
  expect_near(r[0], {1, 2});
  expect_near(r[1], {0, 2});
  // Along the last axis of a matrix.
  a.largest = true;
  a.axis = 1;
  a.k = 1;
  r = run_tuple(OpCode::TopK, {f32({2, 3}, {0, 9, 4, 8, 1, 2})},
                {ir::tensor_type({2, 1}, DType::f32), ir::tensor_type({2, 1}, DType::i64)}, a);
  expect_near(r[0], {9, 8});
  expect_near(r[1], {1, 0});
  a.k = 4;
  EXPECT_THROW(run_tuple(OpCode::TopK, {f32({2, 3}, {0, 9, 4, 8, 1, 2})},
                         {ir::tensor_type({2, 4}, DType::f32), ir::tensor_type({2, 4}, DType::i64)}, a),
               Error);
}

TEST(ReferenceReduce, CumSum) {
  Tensor x = f32({3}, {1, 2, 3});
  ops::CumSumAttrs a;
  expect_near(run(OpCode::CumSum, {x}, {3}, DType::f32, a), {1, 3, 6});
  a.exclusive = true;
  expect_near(run(OpCode::CumSum, {x}, {3}, DType::f32, a), {0, 1, 3});
  a.reverse = true;
  expect_near(run(OpCode::CumSum, {x}, {3}, DType::f32, a), {5, 3, 0});
  a.exclusive = false;
  expect_near(run(OpCode::CumSum, {x}, {3}, DType::f32, a), {6, 5, 3});
  ops::CumSumAttrs b;
  b.axis = 0;
  expect_near(run(OpCode::CumSum, {i64({2, 2}, {1, 2, 3, 4})}, {2, 2}, DType::i64, b), {1, 2, 4, 6});
}
