// Tests of the IR verifier: a valid module passes, and each broken invariant is reported with
// a precise message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/verifier.h"
#include "ops/attrs.h"

using namespace sy;
using namespace sy::ir;
using namespace sy::ops;
using ::testing::HasSubstr;

namespace {

Type T(Shape s, DType d = DType::f32) { return tensor_type(std::move(s), d); }

Module with_main(std::vector<Expr> params, Expr body) {
  Module m;
  m.functions["main"] = function(std::move(params), std::move(body));
  return m;
}

std::string error_of(const Module& m) {
  Status s = verify(m);
  return s.is_ok() ? "<ok>" : s.message();
}

}  // namespace

TEST(Verifier, AcceptsAValidModule) {
  auto r = parse_module(
      "#[outputs = [\"a\", \"b\"]]\n"
      "def @main(%x: Tensor[(1, 2, 4, 4), float32]) -> (Tensor[(1, 2, 4, 4), float32], Tensor[(1, 2, 1, 1), float32]) {\n"
      "  %0 = fn (%a: Tensor[(1, 2, 4, 4), float32]) -> Tensor[(1, 2, 4, 4), float32] attrs {Composite=\"x\"} {\n"
      "    nn.relu(%a)\n"
      "  };\n"
      "  %1 = %0(%x);\n"
      "  %2 = @pool(%1);\n"
      "  (%1, %2)\n"
      "}\n"
      "def @pool(%p: Tensor[(1, 2, 4, 4), float32]) -> Tensor[(1, 2, 1, 1), float32] {\n"
      "  nn.global_avg_pool2d(%p)\n"
      "}\n");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(error_of(*r), "<ok>");
}

TEST(Verifier, MainAndGlobals) {
  Module m;
  Expr a = var("a", T({2}));
  m.functions["f"] = function({a}, a);
  EXPECT_EQ(error_of(m), "module has no @main function");
  Expr x = var("x", T({2}));
  m.functions["main"] = function({x}, call_function(global_var("g", m.functions["f"]->type), {x}));
  EXPECT_EQ(error_of(m), "in @main: @g: refers to unknown function @g");
  m.functions["main"] = function({x}, call_function(global_var("f", func_type({T({2})}, T({3}))), {x}));
  EXPECT_EQ(error_of(m), "in @main: @f: has type fn(Tensor[(2,), float32]) -> Tensor[(3,), float32] but @f has type "
                         "fn(Tensor[(2,), float32]) -> Tensor[(2,), float32]");
  m.functions["main"] = x;
  EXPECT_EQ(error_of(m), "@main is not a function");
}

TEST(Verifier, FunctionsAreClosed) {
  Expr x = var("x", T({2}));
  Expr stray = var("stray", T({2}));
  EXPECT_EQ(error_of(with_main({x}, call(OpCode::Add, {x, stray}))),
            "in @main: the result of @main (add): uses %stray, which is not a parameter of @main (functions must be "
            "closed)");
  // A nested fn capturing the enclosing function's parameter.
  Expr a = var("a", T({2}));
  Expr f = function({a}, call(OpCode::Add, {a, x}));
  EXPECT_EQ(error_of(with_main({x}, call_function(f, {x}))),
            "in @main: the result of %0 in @main (add): uses %x, which is not a parameter of fn %0 in @main "
            "(functions must be closed)");
  EXPECT_EQ(error_of(with_main({x}, stray)),
            "in @main: @main: uses %stray, which is not a parameter of @main (functions must be closed)");
  // A parameter listed twice.
  EXPECT_THAT(error_of(with_main({x, x}, x)), HasSubstr("parameter 1 (%x) appears twice"));
}

TEST(Verifier, StoredTypesMustMatchRelations) {
  Expr x = var("x", T({2, 3}));
  auto wrong = std::make_shared<CallNode>(T({3, 2}), OpCode::Relu, nullptr, std::vector<Expr>{x},
                                          std::make_shared<NoAttrs>());
  EXPECT_EQ(error_of(with_main({x}, call(OpCode::Exp, {wrong}))),
            "in @main: %0 in @main (nn.relu): stored type Tensor[(3, 2), float32] differs from the type its relation "
            "gives, Tensor[(2, 3), float32]");
  auto bad_attrs = std::make_shared<CallNode>(T({2, 3}), OpCode::Softmax, nullptr, std::vector<Expr>{x},
                                              std::make_shared<NoAttrs>());
  EXPECT_EQ(error_of(with_main({x}, bad_attrs)),
            "in @main: the result of @main (nn.softmax): has attributes NoAttrs, nn.softmax takes AxisAttrs");
  auto bad_count = std::make_shared<CallNode>(T({2, 3}), OpCode::Add, nullptr, std::vector<Expr>{x},
                                              std::make_shared<NoAttrs>());
  EXPECT_EQ(error_of(with_main({x}, bad_count)), "in @main: the result of @main (add): 1 arguments, add takes 2");
  Conv2dAttrs conv;
  auto bad_rel = std::make_shared<CallNode>(T({2, 3}), OpCode::Conv2d, nullptr, std::vector<Expr>{x, x},
                                            std::make_shared<Conv2dAttrs>(conv));
  EXPECT_THAT(error_of(with_main({x}, bad_rel)), HasSubstr("(nn.conv2d): type relation fails: nn.conv2d: "));
}

TEST(Verifier, TuplesAndFunctionCalls) {
  Expr x = var("x", T({2}));
  Expr t = tuple({x, x});
  auto out_of_range = std::make_shared<TupleGetItemNode>(T({2}), t, 2);
  EXPECT_EQ(error_of(with_main({x}, out_of_range)),
            "in @main: the result of @main (tuple projection): tuple index 2 out of range for (Tensor[(2,), "
            "float32], Tensor[(2,), float32])");
  auto bad_tuple = std::make_shared<TupleNode>(tuple_type({T({3})}), std::vector<Expr>{x});
  EXPECT_EQ(error_of(with_main({x}, bad_tuple)),
            "in @main: the result of @main (tuple): stored type of field 0 is Tensor[(3,), float32], the field has "
            "type Tensor[(2,), float32]");
  Expr a = var("a", T({3}));
  Expr f = function({a}, a);
  auto bad_call = std::make_shared<CallNode>(T({3}), OpCode::kCount, f, std::vector<Expr>{x}, std::make_shared<NoAttrs>());
  EXPECT_EQ(error_of(with_main({x}, bad_call)),
            "in @main: the result of @main (function call): argument 0 has type Tensor[(2,), float32], the parameter "
            "expects Tensor[(3,), float32]");
}

TEST(Verifier, OutputNamesMatchMainResults) {
  Expr x = var("x", T({2}));
  Module m = with_main({x}, tuple({x, x}));
  m.output_names = {"only_one"};
  EXPECT_EQ(error_of(m), "module has 1 output names but @main returns 2 values");
  m.output_names = {"a", "b"};
  EXPECT_EQ(error_of(m), "<ok>");
}
