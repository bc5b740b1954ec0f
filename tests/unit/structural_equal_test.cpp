// Tests of structural equality (graph isomorphism up to variable names), hashing and the
// first-difference description.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/structural_equal.h"
#include "ops/attrs.h"

using namespace sy;
using namespace sy::ir;
using namespace sy::ops;
using ::testing::HasSubstr;

namespace {

Type T(Shape s, DType d = DType::f32) { return tensor_type(std::move(s), d); }

Module parse(const std::string& text) {
  auto r = parse_module(text);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : Module{};
}

// A small conv block; knobs change one thing at a time.
struct Knobs {
  std::string x_name = "x";
  int64_t stride = 1;
  float weight0 = 0.5f;
  bool swap_params = false;
  bool share_relu = true;
  std::string composite = "mylib.relu";
  int index = 0;
  std::vector<std::string> outputs{"out"};
};

Module block(const Knobs& k) {
  Expr x = var(k.x_name, T({1, 2, 4, 4}));
  Expr y = var("y", T({1, 2, 4, 4}));
  Tensor w(DType::f32, {2, 2, 1, 1});
  w.data<float>()[0] = k.weight0;
  Conv2dAttrs conv;
  conv.strides = {k.stride, k.stride};
  Expr c = call(OpCode::Conv2d, {k.swap_params ? y : x, constant(w)}, conv);
  Expr a = var("a", c->type);
  Expr f = function({a}, call(OpCode::Relu, {a}), {{"Composite", k.composite}});
  Expr r1 = call_function(f, {c});
  Expr r2 = k.share_relu ? r1 : call_function(f, {c});
  SplitAttrs sp;
  sp.axis = 1;
  sp.sizes = {1, 1};
  Expr s = call(OpCode::Split, {r1}, sp);
  Expr out = call(OpCode::Add, {tuple_get_item(s, k.index), tuple_get_item(s, 1)});
  Expr body = tuple({call(OpCode::Add, {r1, r2}), out, k.swap_params ? x : y});
  Module m;
  m.functions["main"] = function({x, y}, body);
  m.output_names = k.outputs;
  if (k.outputs.size() == 1) m.output_names = {"a", "b", "c"};
  return m;
}

}  // namespace

TEST(StructuralEqual, IndependentlyBuiltGraphsAreEqualUpToVarNames) {
  Knobs k;
  Module a = block(k);
  k.x_name = "renamed";
  Module b = block(k);
  EXPECT_TRUE(structural_equal(a, b)) << first_difference(a, b);
  EXPECT_EQ(first_difference(a, b), "");
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_TRUE(structural_equal(a.functions["main"], b.functions["main"]));
  EXPECT_EQ(structural_hash(a.functions["main"]), structural_hash(b.functions["main"]));
}

TEST(StructuralEqual, EachDifferenceIsFoundAndDescribed) {
  Module base = block(Knobs{});
  auto differs = [&](Knobs k, const std::string& want) {
    Module other = block(k);
    EXPECT_FALSE(structural_equal(base, other)) << want;
    EXPECT_THAT(first_difference(base, other), HasSubstr(want));
    EXPECT_NE(structural_hash(base), structural_hash(other)) << want;
  };
  Knobs k;
  k.stride = 2;
  // The cause is reported (the attribute), not the types that follow from it.
  differs(k, "%0 in @main: attrs strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1 vs strides=[2, 2], ");
  k = Knobs{};
  k.weight0 = 0.25f;
  differs(k, "@c0: constant data differs at element 0: 0.5 vs 0.25");
  k = Knobs{};
  k.composite = "other";
  differs(k, "fn attrs {Composite=\"mylib.relu\"} vs {Composite=\"other\"}");
  k = Knobs{};
  k.index = 1;
  differs(k, "index 0 vs 1");
  k = Knobs{};
  k.outputs = {"x", "y", "z"};
  differs(k, "output names differ: [\"a\", \"b\", \"c\"] vs [\"x\", \"y\", \"z\"]");
}

TEST(StructuralEqual, ParametersMapPositionally) {
  Knobs k;
  k.swap_params = true;  // same shapes, but the graph uses the second parameter where it used the first
  Module a = block(Knobs{});
  Module b = block(k);
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_THAT(first_difference(a, b), HasSubstr("node sharing differs"));
}

TEST(StructuralEqual, SharingMustMatchWithinAFunction) {
  Knobs k;
  k.share_relu = false;  // relu(conv) computed twice instead of once
  Module a = block(Knobs{});
  Module b = block(k);
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_THAT(first_difference(a, b), HasSubstr("node sharing differs"));
  // Hashes ignore sharing (a coarser, still consistent, summary).
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, OpsAttrsAndFunctionSets) {
  const char* base =
      "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
      "  %0 = nn.softmax(%x, axis=1);\n"
      "  @f(%0)\n"
      "}\n"
      "def @f(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
      "  exp(%a)\n"
      "}\n";
  Module a = parse(base);
  Module same = parse(base);
  EXPECT_TRUE(structural_equal(a, same));
  Module attrs = parse(
      "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
      "  %0 = nn.softmax(%x, axis=0);\n  @f(%0)\n}\n"
      "def @f(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n  exp(%a)\n}\n");
  EXPECT_EQ(first_difference(a, attrs), "in @main: %0 in @main: attrs axis=1 vs axis=0");
  Module op = parse(
      "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
      "  %0 = nn.log_softmax(%x, axis=1);\n  @f(%0)\n}\n"
      "def @f(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n  exp(%a)\n}\n");
  EXPECT_EQ(first_difference(a, op), "in @main: %0 in @main: nn.softmax vs nn.log_softmax");
  Module callee = parse(
      "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
      "  %0 = nn.softmax(%x, axis=1);\n  @f(%0)\n}\n"
      "def @f(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n  log(%a)\n}\n");
  EXPECT_EQ(first_difference(a, callee), "in @f: the result of @f: exp vs log");
  Module more = parse(std::string(base) + "def @g(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n  %a\n}\n");
  EXPECT_EQ(first_difference(a, more), "function @g only in the second module");
  EXPECT_EQ(first_difference(more, a), "function @g only in the first module");
  EXPECT_NE(structural_hash(a), structural_hash(more));
}

TEST(StructuralEqual, ExpressionsWithFreeVarsMapThemConsistently) {
  Expr x = var("x", T({2}));
  Expr y = var("y", T({2}));
  Expr p = var("p", T({2}));
  Expr q = var("q", T({2}));
  EXPECT_TRUE(structural_equal(call(OpCode::Add, {x, y}), call(OpCode::Add, {p, q})));
  EXPECT_TRUE(structural_equal(call(OpCode::Add, {x, x}), call(OpCode::Add, {p, p})));
  EXPECT_FALSE(structural_equal(call(OpCode::Add, {x, x}), call(OpCode::Add, {p, q})));
  EXPECT_FALSE(structural_equal(call(OpCode::Add, {x, y}), call(OpCode::Add, {p, p})));
  EXPECT_FALSE(structural_equal(x, var("z", T({3}))));
  EXPECT_FALSE(structural_equal(call(OpCode::Add, {x, y}), call(OpCode::Sub, {x, y})));
  // Dtype and shape of constants matter even when the bytes agree.
  Expr c1 = constant(Tensor::from_vector<int32_t>({2}, {0, 0}));
  Expr c2 = constant(Tensor::from_vector<float>({2}, {0, 0}));
  Expr c3 = constant(Tensor::from_vector<int32_t>({1, 2}, {0, 0}));
  EXPECT_FALSE(structural_equal(c1, c2));
  EXPECT_FALSE(structural_equal(c1, c3));
  EXPECT_TRUE(structural_equal(c1, constant(Tensor::from_vector<int32_t>({2}, {0, 0}))));
  // -0.0 and 0.0 differ bitwise.
  EXPECT_FALSE(structural_equal(constant(Tensor::scalar<float>(0.0f)), constant(Tensor::scalar<float>(-0.0f))));
}

TEST(StructuralEqual, NodesSharedAcrossFunctionScopesCompareAsCopies) {
  // The same closed node used in main and inside a nested fn is printed once per scope, so it
  // must compare equal to two separate copies.
  Expr k = constant(Tensor::from_vector<float>({2}, {1, 2}));
  auto build = [&](bool share) {
    Expr shared = call(OpCode::Exp, {k});
    Expr a = var("a", T({2}));
    Expr f = function({a}, call(OpCode::Add, {a, share ? shared : call(OpCode::Exp, {k})}));
    Expr x = var("x", T({2}));
    Module m;
    m.functions["main"] = function({x}, call_function(f, {call(OpCode::Add, {x, shared})}));
    return m;
  };
  EXPECT_TRUE(structural_equal(build(true), build(false))) << first_difference(build(true), build(false));
}

TEST(StructuralEqual, DeepGraphsDoNotRecurse) {
  auto chain = [](int n, OpCode last) {
    Expr x = var("x", T({4}));
    Expr e = x;
    for (int i = 0; i < n; ++i) e = call(OpCode::Relu, {e});
    Module m;
    m.functions["main"] = function({x}, call(last, {e}));
    return m;
  };
  Module a = chain(50000, OpCode::Neg);
  EXPECT_TRUE(structural_equal(a, chain(50000, OpCode::Neg)));
  EXPECT_EQ(structural_hash(a), structural_hash(chain(50000, OpCode::Neg)));
  EXPECT_THAT(first_difference(a, chain(50000, OpCode::Exp)), HasSubstr("neg vs exp"));
  EXPECT_FALSE(structural_equal(a, chain(49999, OpCode::Neg)));
}
