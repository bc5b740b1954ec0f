// Reference kernels: unary and binary elementwise ops, broadcasting, casts and ONNX corner cases.
#include <limits>

#include "ops/op.h"
#include "reference_test_util.h"

using namespace sy;
using namespace sy::reftest;
using ops::OpCode;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST(ReferenceUnary, RoundIsHalfToEven) {
  Tensor y = run(OpCode::Round, {f32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.3f, -2.7f})}, {7});
  expect_near(y, {0, 2, 2, 0, -2, 2, -3});
}

TEST(ReferenceUnary, MathFunctions) {
  Tensor x = f32({3}, {-1.0f, 0.0f, 2.0f});
  expect_near(run(OpCode::Exp, {x}, {3}), {std::exp(-1.0), 1.0, std::exp(2.0)});
  expect_near(run(OpCode::Abs, {x}, {3}), {1, 0, 2});
  expect_near(run(OpCode::Neg, {x}, {3}), {1, 0, -2});
  expect_near(run(OpCode::Sign, {f32({3}, {-3.0f, 0.0f, NAN})}, {3}), {-1, 0, kNaN});
  expect_near(run(OpCode::Relu, {x}, {3}), {0, 0, 2});
  expect_near(run(OpCode::Sigmoid, {f32({3}, {0.0f, -100.0f, 100.0f})}, {3}), {0.5, 0.0, 1.0});
  expect_near(run(OpCode::Tanh, {x}, {3}), {std::tanh(-1.0), 0.0, std::tanh(2.0)});
  expect_near(run(OpCode::Reciprocal, {f32({2}, {4.0f, -0.5f})}, {2}), {0.25, -2});
  expect_near(run(OpCode::Floor, {f32({2}, {-1.5f, 1.5f})}, {2}), {-2, 1});
  expect_near(run(OpCode::Ceil, {f32({2}, {-1.5f, 1.5f})}, {2}), {-1, 2});
  expect_near(run(OpCode::Erf, {f32({1}, {0.5f})}, {1}), {std::erf(0.5)});
}

TEST(ReferenceUnary, Activations) {
  Tensor x = f32({5}, {-4.0f, -1.0f, 0.0f, 1.0f, 4.0f});
  expect_near(run(OpCode::HardSwish, {x}, {5}), {0, -1.0 / 3, 0, 2.0 / 3, 4});
  ops::HardSigmoidAttrs hs;
  expect_near(run(OpCode::HardSigmoid, {x}, {5}, DType::f32, hs), {0, 0.3, 0.5, 0.7, 1});
  ops::AlphaAttrs alpha;
  alpha.alpha = 0.1;
  expect_near(run(OpCode::LeakyRelu, {x}, {5}, DType::f32, alpha), {-0.4, -0.1, 0, 1, 4});
  alpha.alpha = 1.0;
  expect_near(run(OpCode::Elu, {x}, {5}, DType::f32, alpha), {std::exp(-4.0) - 1, std::exp(-1.0) - 1, 0, 1, 4});
  expect_near(run(OpCode::Celu, {x}, {5}, DType::f32, alpha), {std::exp(-4.0) - 1, std::exp(-1.0) - 1, 0, 1, 4});
  alpha.alpha = 1.0;
  expect_near(run(OpCode::ThresholdedRelu, {x}, {5}, DType::f32, alpha), {0, 0, 0, 0, 4});
  ops::SeluAttrs selu;
  expect_near(run(OpCode::Selu, {f32({2}, {-1.0f, 2.0f})}, {2}, DType::f32, selu),
              {selu.gamma * (selu.alpha * std::exp(-1.0) - selu.alpha), selu.gamma * 2});
  expect_near(run(OpCode::Softsign, {x}, {5}), {-0.8, -0.5, 0, 0.5, 0.8});
  // Softplus must not overflow for large inputs.
  expect_near(run(OpCode::Softplus, {f32({3}, {100.0f, 0.0f, -100.0f})}, {3}), {100, std::log(2.0), 0});
  expect_near(run(OpCode::Mish, {f32({1}, {1.0f})}, {1}), {std::tanh(std::log1p(std::exp(1.0)))});
}

TEST(ReferenceUnary, GeluExactAndTanh) {
  Tensor x = f32({2}, {1.0f, -2.0f});
  ops::GeluAttrs g;
  expect_near(run(OpCode::Gelu, {x}, {2}, DType::f32, g), {0.8413447, -2 * 0.5 * (1 + std::erf(-2 / std::sqrt(2.0)))});
  g.approximate = "tanh";
  expect_near(run(OpCode::Gelu, {x}, {2}, DType::f32, g), {0.8411920, -0.04540230});
  g.approximate = "bogus";
  EXPECT_THROW(run(OpCode::Gelu, {x}, {2}, DType::f32, g), Error);
}

TEST(ReferenceUnary, ClipKeepsNaNAndWorksOnInts) {
  ops::ClipAttrs c;
  c.min = -1;
  c.max = 1;
  expect_near(run(OpCode::Clip, {f32({4}, {-2.0f, 0.5f, 3.0f, NAN})}, {4}, DType::f32, c), {-1, 0.5, 1, kNaN});
  expect_near(run(OpCode::Clip, {i32({3}, {-5, 0, 5})}, {3}, DType::i32, c), {-1, 0, 1});
  ops::ClipAttrs only_max;
  only_max.max = 0;
  expect_near(run(OpCode::Clip, {f32({2}, {-7.0f, 7.0f})}, {2}, DType::f32, only_max), {-7, 0});
}

TEST(ReferenceUnary, CastTruncatesAndBoolIsNonZero) {
  ops::CastAttrs c;
  c.to = DType::i32;
  Tensor y = run(OpCode::Cast, {f32({4}, {1.7f, -1.7f, 2.5f, -0.2f})}, {4}, DType::i32, c);
  EXPECT_EQ(y.dtype(), DType::i32);
  expect_near(y, {1, -1, 2, 0});
  c.to = DType::boolean;
  y = run(OpCode::Cast, {f32({3}, {0.0f, 0.5f, NAN})}, {3}, DType::boolean, c);
  expect_near(y, {0, 1, 1});
  c.to = DType::f32;
  expect_near(run(OpCode::Cast, {Tensor::from_vector<bool>({2}, {true, false})}, {2}, DType::f32, c), {1, 0});
  c.to = DType::u8;
  expect_near(run(OpCode::Cast, {i32({2}, {-1, 256})}, {2}, DType::u8, c), {255, 0});
}

TEST(ReferenceUnary, PredicatesProduceBool) {
  Tensor x = f32({4}, {1.0f, NAN, INFINITY, -INFINITY});
  Tensor nan = run(OpCode::IsNaN, {x}, {4}, DType::boolean);
  EXPECT_EQ(nan.dtype(), DType::boolean);
  expect_near(nan, {0, 1, 0, 0});
  ops::IsInfAttrs inf;
  expect_near(run(OpCode::IsInf, {x}, {4}, DType::boolean, inf), {0, 0, 1, 1});
  inf.detect_positive = false;
  expect_near(run(OpCode::IsInf, {x}, {4}, DType::boolean, inf), {0, 0, 0, 1});
  expect_near(run(OpCode::LogicalNot, {Tensor::from_vector<bool>({2}, {true, false})}, {2}, DType::boolean), {0, 1});
}

TEST(ReferenceUnary, IntegerNegWraps) {
  Tensor x = Tensor::from_vector<int8_t>({3}, {-128, 5, -3});
  expect_near(run(OpCode::Neg, {x}, {3}, DType::i8), {-128, -5, 3});
  expect_near(run(OpCode::Abs, {x}, {3}, DType::i8), {-128, 5, 3});
}

TEST(ReferenceBinary, BroadcastsNumpyStyle) {
  // a: [2, 1, 3] = i*10 + k; b: [4, 1] = j*100 -> out[i, j, k] = i*10 + k + j*100.
  Tensor a = f32({2, 1, 3}, {0, 1, 2, 10, 11, 12});
  Tensor b = f32({4, 1}, {0, 100, 200, 300});
  Tensor y = run(OpCode::Add, {a, b}, {2, 4, 3});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) want.push_back(i * 10 + k + j * 100);
  expect_near(y, want);
  // Scalar operand on either side.
  expect_near(run(OpCode::Sub, {Tensor::scalar<float>(10), f32({3}, {1, 2, 3})}, {3}), {9, 8, 7});
  expect_near(run(OpCode::Mul, {f32({3}, {1, 2, 3}), Tensor::scalar<float>(2)}, {3}), {2, 4, 6});
}

TEST(ReferenceBinary, IntegerDivisionTruncates) {
  Tensor y = run(OpCode::Div, {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})}, {4}, DType::i32);
  expect_near(y, {3, -3, -3, 3});
  EXPECT_THROW(run(OpCode::Div, {i32({1}, {1}), i32({1}, {0})}, {1}, DType::i32), Error);
  expect_near(run(OpCode::Div, {f32({1}, {1}), f32({1}, {0})}, {1}), {kInf});
}

TEST(ReferenceBinary, ModFollowsDivisorSignUnlessFmod) {
  Tensor a = i64({6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = i64({6}, {2, -3, 8, -2, 3, 5});
  ops::ModAttrs m;
  expect_near(run(OpCode::Mod, {a, b}, {6}, DType::i64, m), {0, -2, 5, 0, 2, 3});
  m.fmod = true;
  expect_near(run(OpCode::Mod, {a, b}, {6}, DType::i64, m), {0, 1, 5, 0, -1, 3});
  Tensor fa = f32({2}, {5.5f, -4.3f}), fb = f32({2}, {-2.0f, 2.1f});
  expect_near(run(OpCode::Mod, {fa, fb}, {2}, DType::f32, m), {std::fmod(5.5, -2.0), std::fmod(-4.3f, 2.1f)});
  m.fmod = false;
  expect_near(run(OpCode::Mod, {fa, fb}, {2}, DType::f32, m), {-0.5, std::fmod(-4.3f, 2.1f) + 2.1f});
}

TEST(ReferenceBinary, PowMixedTypes) {
  expect_near(run(OpCode::Pow, {i64({3}, {2, 3, -2}), i64({3}, {3, 2, 3})}, {3}, DType::i64), {8, 9, -8});
  expect_near(run(OpCode::Pow, {f32({2}, {2, 4}), i64({2}, {2, -1})}, {2}), {4, 0.25});
  expect_near(run(OpCode::Pow, {i32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}, {3}, DType::i32), {1, 32, 729});
  expect_near(run(OpCode::Pow, {f32({2}, {4, -8}), f32({2}, {0.5f, 1.0f / 3})}, {2}), {2, kNaN});
}

TEST(ReferenceBinary, MaxMinPropagateNaN) {
  Tensor a = f32({3}, {NAN, 1, 5}), b = f32({3}, {0, NAN, 3});
  expect_near(run(OpCode::Maximum, {a, b}, {3}), {kNaN, kNaN, 5});
  expect_near(run(OpCode::Minimum, {a, b}, {3}), {kNaN, kNaN, 3});
  expect_near(run(OpCode::Maximum, {i32({2}, {-1, 4}), i32({2}, {3, 2})}, {2}, DType::i32), {3, 4});
}

TEST(ReferenceBinary, PReluBroadcastsSlope) {
  Tensor x = f32({2, 2}, {-1, 2, -3, 4});
  Tensor slope = f32({2}, {0.5f, 0.25f});
  expect_near(run(OpCode::PRelu, {x, slope}, {2, 2}), {-0.5, 2, -1.5, 4});
}

TEST(ReferenceBinary, ComparisonsAndLogic) {
  Tensor a = f32({3}, {1, 2, 3}), b = f32({3}, {2, 2, 2});
  expect_near(run(OpCode::Equal, {a, b}, {3}, DType::boolean), {0, 1, 0});
  expect_near(run(OpCode::Less, {a, b}, {3}, DType::boolean), {1, 0, 0});
  expect_near(run(OpCode::LessEqual, {a, b}, {3}, DType::boolean), {1, 1, 0});
  expect_near(run(OpCode::Greater, {a, b}, {3}, DType::boolean), {0, 0, 1});
  expect_near(run(OpCode::GreaterEqual, {a, b}, {3}, DType::boolean), {0, 1, 1});
  Tensor p = Tensor::from_vector<bool>({4}, {true, true, false, false});
  Tensor q = Tensor::from_vector<bool>({4}, {true, false, true, false});
  expect_near(run(OpCode::LogicalAnd, {p, q}, {4}, DType::boolean), {1, 0, 0, 0});
  expect_near(run(OpCode::LogicalOr, {p, q}, {4}, DType::boolean), {1, 1, 1, 0});
  expect_near(run(OpCode::LogicalXor, {p, q}, {4}, DType::boolean), {0, 1, 1, 0});
}

TEST(ReferenceBinary, WhereBroadcastsAllThree) {
  Tensor cond = Tensor::from_vector<bool>({2}, {true, false});
  Tensor x = f32({2, 1}, {1, 2});
  Tensor y = Tensor::scalar<float>(-1);
  expect_near(run(OpCode::Where, {cond, x, y}, {2, 2}), {1, -1, 2, -1});
}

TEST(ReferenceBinary, LargeBroadcastMatchesScalarLoop) {
  // Big enough to take the parallel path, with a broadcast middle axis.
  Tensor a = iota_f32({8, 1, 4096});
  Tensor b = iota_f32({1, 3, 1}, 1.0f);
  Tensor y = run(OpCode::Mul, {a, b}, {8, 3, 4096});
  const float* p = y.data<float>();
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4096; k += 511) ASSERT_EQ(p[(i * 3 + j) * 4096 + k], float(i * 4096 + k) * float(j + 1));
}
