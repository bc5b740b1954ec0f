// The pattern language: matching, failure reasons, alternatives, optional, tuples, and
// composite rewriting (largest match first, interior values must not escape).
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "pattern/pattern.h"

namespace sy {
namespace {

using namespace pattern;
using ops::OpCode;

ir::Module parse(const std::string& text) {
  Result<ir::Module> m = ir::parse_module(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.value();
}

const char* kConvBlock = R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32]) -> Tensor[(1, 3, 4, 4), float32] {
  %0 = nn.conv2d(%x, %w, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);
  %1 = nn.relu(%0);
  add(%1, %0)
}
)";

Pattern conv() { return op(OpCode::Conv2d, {wildcard(), var()}); }

TEST(Pattern, MatchesAndBindsInputsInOrder) {
  ir::Module m = parse(kConvBlock);
  const ir::Expr& relu = m.main().body->as<ir::CallNode>()->args[0];
  Match r = match(op(OpCode::Relu, {conv()}), relu);
  ASSERT_TRUE(r.ok) << r.why;
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0], m.main().params[0]);
  EXPECT_EQ(r.inputs[1], m.main().params[1]);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes.back(), relu);  // root last
}

TEST(Pattern, SaysWhyAMatchFailed) {
  ir::Module m = parse(kConvBlock);
  const ir::Expr& body = m.main().body;
  Match r = match(op(OpCode::Mul, {wildcard(), wildcard()}), body);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.why, "expected multiply, found add");
  r = match(op(OpCode::Add, {op(OpCode::Relu, {op(OpCode::Conv2d, {wildcard(), constant()})}), wildcard()}), body);
  EXPECT_EQ(r.why, "add argument 0: nn.relu argument 0: nn.conv2d argument 1: expected a constant, found variable %w");
  CallCheck groups2{[](const ir::CallNode& c) {
                      return c.attrs_as<ops::Conv2dAttrs>().groups == 2 ? "" : std::string("groups is not 2");
                    },
                    "groups=2"};
  r = match(op(OpCode::Conv2d, {wildcard(), wildcard()}, groups2), body->as<ir::CallNode>()->args[1]);
  EXPECT_EQ(r.why, "nn.conv2d: groups is not 2");
  EXPECT_TRUE(r.inputs.empty() && r.nodes.empty());
}

TEST(Pattern, AlternativesAndOptionalTryTheLongerFormFirst) {
  ir::Module m = parse(kConvBlock);
  const ir::Expr& relu = m.main().body->as<ir::CallNode>()->args[0];
  Pattern p = optional(conv(), [](Pattern x) { return op(OpCode::Relu, {x}); });
  EXPECT_EQ(pattern_str(p), "(nn.relu(nn.conv2d(*, var)) | nn.conv2d(*, var))");
  Match r = match(p, relu);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.nodes.size(), 2u);
  r = match(p, relu->as<ir::CallNode>()->args[0]);  // the bare conv
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.nodes.size(), 1u);
  Match bad = match(alt({op(OpCode::Tanh, {wildcard()}), op(OpCode::Sigmoid, {wildcard()})}), relu);
  EXPECT_EQ(bad.why, "(expected tanh, found nn.relu; or expected sigmoid, found nn.relu)");
}

TEST(Pattern, TuplesMatchFieldByField) {
  ir::Module m = parse(R"(
def @main(%x: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32]) {
  %0 = nn.relu(%x);
  (%0, %x)
}
)");
  Match r = match(tuple({op(OpCode::Relu, {var()}), var()}), m.main().body);
  ASSERT_TRUE(r.ok) << r.why;
  EXPECT_EQ(r.inputs.size(), 1u);  // %x bound twice, listed once
  EXPECT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(match(tuple({var()}), m.main().body).why, "expected a tuple of 1, found 2 fields");
}

TEST(Pattern, MatchingNeverChangesTheGraph) {
  ir::Module m = parse(kConvBlock);
  std::string before = ir::print_module(m);
  (void)match(op(OpCode::Add, {wildcard(), wildcard()}), m.main().body);
  (void)find_matches(m.main().body, op(OpCode::Relu, {wildcard()}));
  EXPECT_EQ(ir::print_module(m), before);
}

TEST(Pattern, RewriteOutlinesMatchesIntoCompositeFunctions) {
  ir::Module m = parse(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32]) -> Tensor[(1, 3, 4, 4), float32] {
  %0 = nn.conv2d(%x, %w, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%x, %w, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);
  add(%1, %2)
}
)");
  Pattern p = optional(conv(), [](Pattern x) { return op(OpCode::Relu, {x}); });
  ir::Expr body = rewrite_composites(m.main().body, p, "t.conv_relu");
  ir::Module out = m;
  out.functions["main"] = ir::function(m.main().params, body);
  std::string text = ir::print_module(out);
  // Both convs become composites: one with its relu, one alone.
  EXPECT_NE(text.find("Composite=\"t.conv_relu\""), std::string::npos) << text;
  int composites = 0;
  for (const ir::Expr& e : ir::post_order(body))
    if (auto* c = e->as<ir::CallNode>(); c && !c->is_op()) ++composites;
  EXPECT_EQ(composites, 2) << text;
}

TEST(Pattern, RewriteSkipsMatchesWhoseInteriorIsUsedOutside) {
  ir::Module m = parse(kConvBlock);  // %0 feeds relu and add: relu(conv) may not swallow it
  ir::Expr body = rewrite_composites(m.main().body, op(OpCode::Relu, {conv()}), "t.conv_relu");
  EXPECT_EQ(body, m.main().body);
  // With a check that rejects, nothing changes either.
  ir::Expr b2 = rewrite_composites(m.main().body, conv(), "t.conv", [](const Match&) { return std::string("no"); });
  EXPECT_EQ(b2, m.main().body);
  ir::Expr b3 = rewrite_composites(m.main().body, conv(), "t.conv");
  EXPECT_NE(b3, m.main().body);
}

}  // namespace
}  // namespace sy
