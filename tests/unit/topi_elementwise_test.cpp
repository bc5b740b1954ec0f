// topi elementwise computes (unary, binary with broadcasting, where, cast, clip) run as generated
// C and compared with the reference kernels: every op, every dtype class, broadcasting shapes,
// vector tails, scalars, NaN/inf where the reference defines them.
#include <gtest/gtest.h>

#include <limits>

#include "compiled_vs_reference.h"
#include "native_op_test_util.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "topi_test_data.h"

using namespace sy;
using namespace sy::testing;
using namespace sy::topitest;
using ops::OpCode;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

template <typename A>
ir::AttrsPtr attrs(A a) {
  return std::make_shared<A>(std::move(a));
}

// Float specials appended after ordinary values.
const std::vector<double> kSpecials = {kNaN, kInf, -kInf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1e30, -1e30};

}  // namespace

TEST(TopiElementwise, UnaryFloatMath) {
  struct Domain {
    OpCode op;
    double lo, hi;
  };
  const Domain ops_list[] = {
      {OpCode::Exp, -10, 10},      {OpCode::Log, 0.01, 100},    {OpCode::Sqrt, 0, 100},
      {OpCode::Reciprocal, 0.1, 10}, {OpCode::Sin, -6, 6},      {OpCode::Cos, -6, 6},
      {OpCode::Tan, -1.5, 1.5},    {OpCode::Asin, -1, 1},       {OpCode::Acos, -1, 1},
      {OpCode::Atan, -10, 10},     {OpCode::Sinh, -5, 5},       {OpCode::Cosh, -5, 5},
      {OpCode::Asinh, -10, 10},    {OpCode::Acosh, 1, 10},      {OpCode::Atanh, -0.99, 0.99},
      {OpCode::Tanh, -5, 5},       {OpCode::Sigmoid, -20, 20},  {OpCode::Erf, -3, 3},
      {OpCode::Floor, -5, 5},      {OpCode::Ceil, -5, 5},       {OpCode::Round, -5, 5},
      {OpCode::Softplus, -30, 30}, {OpCode::Softsign, -5, 5},   {OpCode::HardSwish, -5, 5},
      {OpCode::Mish, -10, 10},     {OpCode::Relu, -5, 5},       {OpCode::Neg, -5, 5},
      {OpCode::Abs, -5, 5},        {OpCode::Sign, -5, 5},       {OpCode::Identity, -5, 5},
  };
  std::vector<NativeCase> cases;
  uint32_t seed = 1;
  for (const Domain& d : ops_list) {
    // 37 elements: two vectors of 16 and a tail; f64 in a 3-d shape; a scalar.
    cases.push_back({d.op, nullptr, {random(DType::f32, {37}, d.lo, d.hi, seed++)}});
    cases.push_back({d.op, nullptr, {random(DType::f64, {2, 3, 7}, d.lo, d.hi, seed++)}});
    cases.push_back({d.op, nullptr, {random(DType::f32, {}, d.lo, d.hi, seed++)}});
    // NaN, infinities, signed zeros, halves (Round is half to even), huge values.
    cases.push_back({d.op, nullptr, {values(DType::f32, {12}, kSpecials)}, 1e-5, 1e-6, "specials"});
  }
  expect_native_cases_match_reference(cases);
}

TEST(TopiElementwise, UnaryNumericAllDtypes) {
  std::vector<NativeCase> cases;
  uint32_t seed = 100;
  for (DType t : kNumeric) {
    const double lo = t == DType::u8 ? 0 : -100, hi = 100;
    for (OpCode op : {OpCode::Neg, OpCode::Abs, OpCode::Sign, OpCode::Relu, OpCode::Identity}) {
      cases.push_back({op, nullptr, {random(t, {5, 7}, lo, hi, seed++)}});
      cases.push_back({op, nullptr, {random(t, {}, lo, hi, seed++)}});
    }
  }
  // Wrapping: -(-128) in int8 is -128, as the reference.
  cases.push_back({OpCode::Neg, nullptr, {values(DType::i8, {3}, {-128, 127, 0})}});
  cases.push_back({OpCode::Abs, nullptr, {values(DType::i8, {3}, {-128, -127, 5})}});
  cases.push_back({OpCode::Identity, nullptr, {values(DType::boolean, {5}, {1, 0, 0, 1, 1})}});
  cases.push_back({OpCode::LogicalNot, nullptr, {values(DType::boolean, {19}, {1, 0, 0, 1, 1})}});
  for (DType t : kFloats) {
    cases.push_back({OpCode::IsNaN, nullptr, {values(t, {12}, kSpecials)}});
    for (int mask = 0; mask < 4; ++mask) {
      ops::IsInfAttrs a;
      a.detect_positive = mask & 1;
      a.detect_negative = mask & 2;
      cases.push_back({OpCode::IsInf, attrs(a), {values(t, {12}, kSpecials)}});
    }
  }
  expect_native_cases_match_reference(cases);
}

TEST(TopiElementwise, ActivationsWithAttributes) {
  std::vector<NativeCase> cases;
  uint32_t seed = 200;
  for (DType t : kFloats) {
    auto x = [&] { return random(t, {3, 19}, -6, 6, seed++); };
    auto sp = [&] { return values(t, {12}, kSpecials); };
    for (const char* approx : {"none", "tanh"}) {
      ops::GeluAttrs g;
      g.approximate = approx;
      cases.push_back({OpCode::Gelu, attrs(g), {x()}});
      cases.push_back({OpCode::Gelu, attrs(g), {sp()}});
    }
    ops::HardSigmoidAttrs hs;
    cases.push_back({OpCode::HardSigmoid, attrs(hs), {x()}});
    hs.alpha = 0.3;
    hs.beta = 0.1;
    cases.push_back({OpCode::HardSigmoid, attrs(hs), {sp()}});
    for (double alpha : {0.01, 0.5, 2.0}) {
      ops::AlphaAttrs a;
      a.alpha = alpha;
      for (OpCode op : {OpCode::LeakyRelu, OpCode::Elu, OpCode::Celu, OpCode::ThresholdedRelu}) {
        cases.push_back({op, attrs(a), {x()}});
        cases.push_back({op, attrs(a), {sp()}});
      }
    }
    ops::SeluAttrs selu;
    cases.push_back({OpCode::Selu, attrs(selu), {x()}});
    selu.alpha = 2;
    selu.gamma = 3;
    cases.push_back({OpCode::Selu, attrs(selu), {sp()}});
  }
  expect_native_cases_match_reference(cases);
}

TEST(TopiElementwise, ClipAllDtypes) {
  std::vector<NativeCase> cases;
  uint32_t seed = 300;
  struct Bounds {
    double lo, hi;
  };
  const Bounds bounds[] = {{-kInf, kInf}, {-2.5, 3.5}, {0, kInf}, {-kInf, 6}, {1.1, 1.2}, {-1e30, 1e30}};
  for (DType t : kNumeric) {
    for (const Bounds& b : bounds) {
      ops::ClipAttrs a;
      a.min = b.lo;
      a.max = b.hi;
      cases.push_back({OpCode::Clip, attrs(a), {random(t, {41}, t == DType::u8 ? 0 : -10, 10, seed++)}});
    }
  }
  ops::ClipAttrs a;
  a.min = -1;
  a.max = 1;
  cases.push_back({OpCode::Clip, attrs(a), {values(DType::f32, {12}, kSpecials)}});
  expect_native_cases_match_reference(cases);
}

TEST(TopiElementwise, CastEveryPair) {
  std::vector<NativeCase> cases;
  // Fractions, negatives, values out of every narrower range.
  const std::vector<double> ordinary = {0, 1, -1, 2.7, -2.7, 127, 128, -129, 255, 256, 300.5, -70000.25, 3e9, -3e9};
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      ops::CastAttrs c;
      c.to = to;
      Tensor x = from == DType::boolean ? values(from, {5}, {1, 0, 1, 1, 0})
                 : is_float(from)       ? values(from, {14}, ordinary)
                                        : random(from, {14}, from == DType::u8 ? 0 : -100, 100, 7);
      cases.push_back({OpCode::Cast, attrs(c), {x}});
      if (is_float(from)) {
        // NaN -> 0, infinities and 1e30 saturate through int64, as the reference.
        cases.push_back({OpCode::Cast, attrs(c), {values(from, {12}, kSpecials)}, 1e-5, 1e-6, "specials"});
      }
    }
  }
  expect_native_cases_match_reference(cases);
}

// A quantizer's clip, cast and dequantizing cast fused into one kernel, the clip's bounds inside
// int32 or not, against the reference on ordinary values and specials (NaN -> 0, -0, ties). The
// kernels inside int32 convert through int32 with no select on data, so the C generator keeps
// loop if-conversion for them (TirSimplify.AClippedFloatConvertsThroughInt32); converted back to
// float (a quantize-dequantize pair), a value clipped inside the narrow type skips the byte, whose
// 16-byte vectors GCC used for the whole loop; clipped wider, the byte's wrap-around stays.
TEST(TopiElementwise, ClippedCastsFusedAsAQuantizerWrites) {
  std::vector<double> xs = {0, 1, -1, 2.7, -2.7, 127.5, 128, -129, 254.5, 255.4, 256, 300.5, -70000.25, 3e9, -3e9, 5e9};
  xs.insert(xs.end(), kSpecials.begin(), kSpecials.end());
  struct Case {
    DType to;
    double lo, hi;
    bool narrowed, byte_kept;
  };
  for (const Case& c : {Case{DType::u8, 0, 255, true, false}, Case{DType::i8, -128, 127, true, false},
                        Case{DType::u8, 0, 300, true, true}, Case{DType::i8, -200, 100, true, true},
                        Case{DType::i32, -2147483648.0, 2147483520.0, true, false}, Case{DType::i32, -3e9, 3e9, false, false},
                        Case{DType::i64, -4e9, 4e9, false, false}}) {
    ops::ClipAttrs clip;
    clip.min = c.lo;
    clip.max = c.hi;
    ops::CastAttrs to, back;
    to.to = c.to;
    back.to = DType::f32;
    ir::Expr x = ir::var("x", ir::tensor_type({static_cast<int64_t>(xs.size())}, DType::f32));
    ir::Module m;
    m.functions["main"] = ir::function(
        {x}, ir::call(OpCode::Cast, {ir::call(OpCode::Cast, {ir::call(OpCode::Clip, {x}, attrs(clip))}, attrs(to))}, attrs(back)));
    native::Compiled nc = native::compile_native(m, native::CompileOptions{});
    const std::string what = std::string(dtype_name(c.to)) + " clipped to [" + std::to_string(c.lo) + ", " + std::to_string(c.hi) + "]";
    EXPECT_EQ(nc.generated_c.find("INT64_MIN") == std::string::npos, c.narrowed) << what;
    EXPECT_EQ(nc.generated_c.find("no-tree-loop-if-convert") == std::string::npos, c.narrowed) << what;
    const bool byte = nc.generated_c.find("(uint8_t)") != std::string::npos || nc.generated_c.find("(int8_t)") != std::string::npos;
    EXPECT_EQ(byte, c.byte_kept) << what;
    nativetest::expect_reference_values(m, nc, {values(DType::f32, {static_cast<int64_t>(xs.size())}, xs)}, what);
  }
}

TEST(TopiElementwise, BinaryArithmeticBroadcasting) {
  const std::pair<Shape, Shape> shapes[] = {
      {{37}, {37}}, {{2, 3, 17}, {17}}, {{4, 1, 5}, {3, 1}}, {{}, {2, 3}}, {{5, 1}, {}}, {{1, 3}, {2, 1}}};
  std::vector<NativeCase> cases;
  uint32_t seed = 400;
  for (DType t : kNumeric) {
    const double lo = t == DType::u8 ? 0 : -50, hi = 50;
    for (OpCode op : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Maximum, OpCode::Minimum}) {
      for (const auto& [sa, sb] : shapes) cases.push_back({op, nullptr, {random(t, sa, lo, hi, seed++), random(t, sb, lo, hi, seed++)}});
    }
    // PRelu: the slope broadcasts to x.
    cases.push_back({OpCode::PRelu, nullptr, {random(t, {2, 3, 17}, lo, hi, seed++), random(t, {3, 1}, lo, hi, seed++)}});
  }
  // Integer wrap-around (int8, uint8).
  cases.push_back({OpCode::Add, nullptr, {values(DType::i8, {3}, {100, -100, 127}), values(DType::i8, {3}, {100, -100, 1})}});
  cases.push_back({OpCode::Mul, nullptr, {values(DType::u8, {3}, {200, 16, 255}), values(DType::u8, {3}, {2, 16, 255})}});
  // NaN propagates through maximum/minimum.
  for (OpCode op : {OpCode::Maximum, OpCode::Minimum})
    cases.push_back({op, nullptr, {values(DType::f32, {12}, kSpecials), values(DType::f32, {12, 1}, kSpecials)}});
  expect_native_cases_match_reference(cases);
}

TEST(TopiElementwise, DivideModPower) {
  std::vector<NativeCase> cases;
  uint32_t seed = 500;
  // Signed divisors of both signs, never zero; dividends of both signs (truncation vs floor).
  const std::vector<double> num = {7, -7, 6, -6, 0, 1, -1, 100, -100, 127, -128, 13};
  const std::vector<double> den = {2, 3, -2, -3, 1, -1, 5, -5, 7, -7, 4, -4};
  for (DType t : kNumeric) {
    const bool u = t == DType::u8;
    Tensor a = u ? values(t, {12}, {7, 8, 6, 0, 1, 100, 255, 13, 9, 3, 2, 250}) : values(t, {12}, num);
    Tensor b = u ? values(t, {12, 1}, {2, 3, 1, 5, 7, 4, 255, 9, 10, 11, 12, 13}) : values(t, {12, 1}, den);
    cases.push_back({OpCode::Div, nullptr, {a, b}});
    for (bool fmod : {false, true}) {
      ops::ModAttrs m;
      m.fmod = fmod;
      cases.push_back({OpCode::Mod, attrs(m), {a, b}});
    }
  }
  for (DType t : kFloats) {
    cases.push_back({OpCode::Div, nullptr, {values(t, {12}, kSpecials), values(t, {12, 1}, kSpecials)}});
    for (bool fmod : {false, true}) {
      ops::ModAttrs m;
      m.fmod = fmod;
      cases.push_back({OpCode::Mod, attrs(m), {random(t, {3, 17}, -20, 20, seed++), values(t, {17}, {2.5, -3, 0.7, -1.25})}});
    }
    cases.push_back({OpCode::Pow, nullptr, {random(t, {2, 19}, 0.1, 5, seed++), random(t, {19}, -3, 3, seed++)}});
    cases.push_back({OpCode::Pow, nullptr, {values(t, {12}, kSpecials), values(t, {12, 1}, {0, 1, 2, -1, 0.5, kNaN})}});
  }
  // int ^ int (exact, wrapping, negative exponents), and mixed dtypes.
  for (DType t : {DType::i8, DType::i16, DType::i32, DType::i64, DType::u8}) {
    const bool u = t == DType::u8;
    Tensor base = u ? values(t, {8}, {0, 1, 2, 3, 5, 7, 10, 255}) : values(t, {8}, {0, 1, -1, 2, -3, 5, 7, -10});
    for (DType e : {DType::i32, DType::i64}) {
      cases.push_back({OpCode::Pow, nullptr, {base, values(e, {9, 1}, {0, 1, 2, 3, 5, 13, 31, -1, -2})}});
    }
    cases.push_back({OpCode::Pow, nullptr, {base, values(DType::f32, {3, 1}, {0.5, 2, -1})}});
  }
  cases.push_back({OpCode::Pow, nullptr, {values(DType::i64, {4}, {3, -3, 2, 7}), values(DType::i64, {4}, {39, 40, 62, 22})}});
  cases.push_back({OpCode::Pow, nullptr, {random(DType::f32, {17}, 0.5, 3, seed++), values(DType::i64, {17}, {0, 1, 2, 3, -1})}});
  cases.push_back({OpCode::Pow, nullptr, {random(DType::f64, {17}, 0.5, 3, seed++), values(DType::f32, {17}, {0.5, 2, -1.5})}});
  expect_native_cases_match_reference(cases);
}

TEST(TopiElementwise, ComparisonsLogicWhere) {
  std::vector<NativeCase> cases;
  uint32_t seed = 600;
  for (DType t : kNumeric) {
    for (OpCode op : {OpCode::Equal, OpCode::Less, OpCode::LessEqual, OpCode::Greater, OpCode::GreaterEqual}) {
      // Small integer range so that equality happens.
      cases.push_back({op, nullptr, {random(t, {3, 17}, 0, 4, seed++), random(t, {17}, 0, 4, seed++)}});
      cases.push_back({op, nullptr, {random(t, {}, 0, 4, seed++), random(t, {2, 2}, 0, 4, seed++)}});
    }
  }
  cases.push_back({OpCode::Equal, nullptr, {values(DType::boolean, {4}, {1, 0, 1, 0}), values(DType::boolean, {4, 1}, {1, 1, 0, 0})}});
  for (OpCode op : {OpCode::Equal, OpCode::Less, OpCode::GreaterEqual})
    cases.push_back({op, nullptr, {values(DType::f32, {12}, kSpecials), values(DType::f32, {12, 1}, kSpecials)}});
  for (OpCode op : {OpCode::LogicalAnd, OpCode::LogicalOr, OpCode::LogicalXor}) {
    cases.push_back({op, nullptr, {random(DType::boolean, {3, 17}, 0, 1, seed++), random(DType::boolean, {17}, 0, 1, seed++)}});
    cases.push_back({op, nullptr, {random(DType::boolean, {2, 1}, 0, 1, seed++), random(DType::boolean, {1, 3}, 0, 1, seed++)}});
  }
  for (DType t : kAllDTypes) {
    cases.push_back({OpCode::Where, nullptr,
                     {random(DType::boolean, {2, 1, 17}, 0, 1, seed++), random(t, {3, 17}, 0, 100, seed++),
                      random(t, {2, 3, 1}, 0, 100, seed++)}});
  }
  cases.push_back({OpCode::Where, nullptr,
                   {random(DType::boolean, {}, 0, 1, seed++), random(DType::f32, {4}, 0, 1, seed++), random(DType::f32, {}, 0, 1, seed++)}});
  expect_native_cases_match_reference(cases);
}
