// Support checks say why they reject; the composite table matches what oneDNN fuses and rejects
// what it cannot, with reasons.
#include "test_util.h"

#include "ir/visitor.h"
#include "ops/op.h"
#include "pattern/pattern.h"

namespace sy::onednn_test {
namespace {

std::string reason(const ir::Expr& call) {
  backends::Verdict v = backend().supports_op(*call->as<ir::CallNode>());
  return v.ok ? "" : v.reason;
}

TEST(OnednnRules, SupportsOpReasons) {
  ir::Expr x5 = input("x", {1, 5, 8, 8});
  ops::Conv2dAttrs g3;
  g3.groups = 3;
  // A weight whose shape passes the type relation only if groups divide... build with 6 channels.
  ir::Expr x6 = input("x", {1, 6, 8, 8});
  ir::Expr ok_conv = ir::call(OpCode::Conv2d, {x6, cst({6, 2, 3, 3}, 1)}, g3);
  EXPECT_EQ(reason(ok_conv), "");

  ir::Expr xd = ir::var("x", ir::tensor_type({1, 4, 8, 8}, DType::f64));
  ir::Expr wd = ir::constant(Tensor(DType::f64, {4, 4, 1, 1}));
  EXPECT_EQ(reason(ir::call(OpCode::Conv2d, {xd, wd}, ops::Conv2dAttrs{})),
            "onednn conv2d: dtype float64 not supported (argument 0; float32 only)");
  ir::Expr xi = ir::var("x", ir::tensor_type({2, 4}, DType::i8));
  EXPECT_EQ(reason(ir::call(OpCode::Relu, {xi})), "onednn relu: dtype int8 not supported (argument 0; float32 only)");

  ops::Pool2dAttrs lp;
  lp.kernel = {2, 2};
  EXPECT_EQ(reason(ir::call(OpCode::LpPool2d, {x5}, lp)), "onednn lp_pool2d: Lp pooling has no oneDNN primitive");

  ops::Pool2dAttrs ceil_incl;
  ceil_incl.kernel = {3, 3};
  ceil_incl.strides = {2, 2};
  ceil_incl.ceil_mode = true;
  ceil_incl.count_include_pad = true;
  EXPECT_NE(reason(ir::call(OpCode::AvgPool2d, {x5}, ceil_incl)).find("ceil_mode with count_include_pad"),
            std::string::npos);

  ir::Expr small = input("s", {5, 1});
  ir::Expr big = input("b", {5, 8});
  EXPECT_EQ(reason(ir::call(OpCode::Sub, {small, big})),
            "onednn subtract: the first operand (5, 1) broadcasts to (5, 8); oneDNN broadcasts only the second "
            "operand");
  EXPECT_EQ(reason(ir::call(OpCode::Add, {small, big})), "");
  ir::Expr row = input("r", {1, 8});
  EXPECT_NE(reason(ir::call(OpCode::Add, {small, row})).find("needs one operand of the result's shape"),
            std::string::npos);

  ops::PadAttrs pad;
  pad.pads = {0, 0, 1, 1, 0, 0, 1, 1};
  EXPECT_EQ(reason(ir::call(OpCode::Pad, {x5}, pad)), "onednn pad: only all-zero pads (a no-op) are supported");
  EXPECT_EQ(reason(ir::call(OpCode::Sin, {x5})), "onednn sin: no oneDNN primitive for this op");
  ops::BatchNormAttrs bn;
  EXPECT_NE(reason(ir::call(OpCode::BatchNorm, {x5, input("s", {5}), cst({5}, 1), cst({5}, 2), cst({5}, 3)}, bn))
                .find("must be constants"),
            std::string::npos);
  ir::Expr v1 = input("v", {8});
  EXPECT_EQ(reason(ir::call(OpCode::MatMul, {big, v1})), "onednn matmul: 1-D operands (vector products) are not supported");
}

TEST(OnednnRules, GroupsReasonFromCheck) {
  // The type relation rejects a mismatched weight, so test the check through a call node built
  // directly (as a corrupted or hand-written graph would give).
  ops::Conv2dAttrs g3;
  g3.groups = 3;
  auto attrs = std::make_shared<ops::Conv2dAttrs>(g3);
  ir::Expr x = input("x", {1, 5, 8, 8});
  ir::Expr w = cst({6, 2, 3, 3}, 1);
  auto node = std::make_shared<ir::CallNode>(ir::tensor_type({1, 6, 6, 6}, DType::f32), OpCode::Conv2d, nullptr,
                                             std::vector<ir::Expr>{x, w}, attrs);
  EXPECT_EQ(backend().supports_op(*node).reason, "onednn conv2d: groups=3 with 5 input channels");
}

// Applies every rule in order, as merge-composites does; returns the composite names, producers first.
std::vector<std::string> composites_of(const ir::Expr& body, ir::Expr* out = nullptr) {
  ir::Expr b = body;
  for (const backends::CompositeRule& r : backend().composite_rules())
    b = pattern::rewrite_composites(b, r.pattern, r.name, r.check);
  std::vector<std::string> names;
  for (const ir::Expr& e : ir::post_order(b)) {
    auto* c = e->as<ir::CallNode>();
    if (c && !c->is_op()) names.push_back(c->callee->as<ir::FunctionNode>()->attrs.at("Composite"));
  }
  if (out) *out = b;
  return names;
}

TEST(OnednnRules, CompositeTableOnAResidualBlock) {
  ir::Expr x = input("x", {1, 16, 8, 8});
  ops::Conv2dAttrs p1;
  p1.padding = {1, 1, 1, 1};
  ir::Expr c1 = ir::call(OpCode::Conv2d, {x, cst({16, 16, 3, 3}, 1), cst({16}, 2)}, p1);
  ir::Expr r1 = ir::call(OpCode::Relu, {c1});
  ir::Expr c2 = ir::call(OpCode::Conv2d, {r1, cst({16, 16, 3, 3}, 3), cst({16}, 4)}, p1);
  ir::Expr a = ir::call(OpCode::Add, {x, c2});
  ir::Expr r2 = ir::call(OpCode::Relu, {a});
  ir::Expr g = ir::call(OpCode::GlobalAvgPool2d, {r2});
  ops::ReshapeAttrs rs;
  rs.newshape = {1, 16};
  ir::Expr d = ir::call(OpCode::Dense, {ir::call(OpCode::Reshape, {g}, rs), cst({10, 16}, 5), cst({10}, 6)});
  ops::ClipAttrs six;
  six.min = 0;
  six.max = 6;
  ir::Expr out = ir::call(OpCode::Clip, {d}, six);
  ir::Expr rewritten;
  EXPECT_EQ(composites_of(out, &rewritten),
            (std::vector<std::string>{"onednn.conv2d_act", "onednn.conv2d_add_act", "onednn.dense_act"}));
  // And the rewritten body runs on oneDNN as one region with the reference's results.
  expect_matches_reference(region({x}, rewritten), {random({1, 16, 8, 8}, 40)}, 1e-5);
}

TEST(OnednnRules, CompositeCheckRejectsWithReason) {
  // An add that broadcasts the conv output cannot be a post-op.
  ir::Expr x = input("x", {1, 4, 1, 1});
  ir::Expr big = input("y", {1, 4, 5, 5});
  ir::Expr c = ir::call(OpCode::Conv2d, {x, cst({4, 4, 1, 1}, 1)}, ops::Conv2dAttrs{});
  ir::Expr a = ir::call(OpCode::Add, {c, big});
  std::string why;
  for (const backends::CompositeRule& r : backend().composite_rules()) {
    if (r.name != "onednn.conv2d_add") continue;
    pattern::Match m = pattern::match(r.pattern, a);
    ASSERT_TRUE(m.ok) << m.why;
    why = r.check(m);
  }
  EXPECT_EQ(why, "onednn add: result (1, 4, 5, 5) is larger than the conv2d output (1, 4, 1, 1) (a post-op cannot "
                 "broadcast it)");
  EXPECT_EQ(composites_of(a), (std::vector<std::string>{"onednn.conv2d"}));
  // int8 dense never becomes a composite.
  ir::Expr xi = ir::var("x", ir::tensor_type({2, 4}, DType::i8));
  ir::Expr di = ir::call(OpCode::Dense, {xi, ir::constant(Tensor(DType::i8, {3, 4}))});
  EXPECT_TRUE(composites_of(di).empty());
}

TEST(OnednnRules, RegionRule) {
  ir::Expr x = input("x", {4, 4});
  ir::Expr r = ir::call(OpCode::Relu, {x});
  ops::ReshapeAttrs rs;
  rs.newshape = {16};
  ir::Expr s = ir::call(OpCode::Reshape, {x}, rs);
  backends::RegionSummary lone{{r}, 1, 16, 128};
  EXPECT_FALSE(backend().worth_offloading(lone).ok);
  ops::ReshapeAttrs back;
  back.newshape = {4, 4};
  backends::RegionSummary layout{{s, ir::call(OpCode::Reshape, {s}, back)}, 2, 0, 128};
  EXPECT_EQ(backend().worth_offloading(layout).reason,
            "onednn: only layout ops (reshape, concat, transpose, ...): nothing to compute");
  backends::RegionSummary two{{r, ir::call(OpCode::Sigmoid, {r})}, 2, 32, 128};
  EXPECT_TRUE(backend().worth_offloading(two).ok);
}

}  // namespace
}  // namespace sy::onednn_test

namespace sy::onednn_test {
namespace {

ir::Expr scalar(float v) { return ir::constant(Tensor::scalar<float>(v)); }

// GELU and LayerNorm as exporters write them out become one primitive each.
TEST(OnednnRules, WrittenOutGeluAndLayerNorm) {
  ir::Expr x = input("x", {2, 5, 16});
  ir::Expr h = ir::call(OpCode::MatMul, {x, cst({16, 16}, 1, -0.5f, 0.5f)});
  ir::Expr hb = ir::call(OpCode::Add, {cst({16}, 2), h});
  ir::Expr e = ir::call(OpCode::Erf, {ir::call(OpCode::Div, {hb, scalar(1.4142135f)})});
  ir::Expr g = ir::call(OpCode::Mul, {ir::call(OpCode::Mul, {hb, ir::call(OpCode::Add, {e, scalar(1.f)})}), scalar(0.5f)});
  ir::Expr r = ir::call(OpCode::Add, {x, g});
  ops::ReduceAttrs last;
  last.axes = {2};
  ir::Expr d = ir::call(OpCode::Sub, {r, ir::call(OpCode::ReduceMean, {r}, last)});
  ir::Expr var = ir::call(OpCode::ReduceMean, {ir::call(OpCode::Pow, {d, scalar(2.f)})}, last);
  ir::Expr y = ir::call(OpCode::Div, {d, ir::call(OpCode::Sqrt, {ir::call(OpCode::Add, {var, scalar(1e-5f)})})});
  ir::Expr ln = ir::call(OpCode::Add, {ir::call(OpCode::Mul, {y, cst({16}, 3, 0.5f, 1.5f)}), cst({16}, 4)});
  ir::Expr rewritten;
  EXPECT_EQ(composites_of(ln, &rewritten),
            (std::vector<std::string>{"onednn.matmul_add", "onednn.gelu_erf", "onednn.layer_norm"}));
  expect_matches_reference(region({x}, rewritten), {random({2, 5, 16}, 41, -2.f, 2.f)}, 1e-5);

  // Not GELU: a factor other than 0.5.
  ir::Expr g2 = ir::call(OpCode::Mul, {ir::call(OpCode::Mul, {hb, ir::call(OpCode::Add, {e, scalar(1.f)})}), scalar(0.7f)});
  for (const backends::CompositeRule& rule : backend().composite_rules())
    if (rule.name == "onednn.gelu_erf") {
      pattern::Match m = pattern::match(rule.pattern, g2);
      ASSERT_TRUE(m.ok) << m.why;
      EXPECT_EQ(rule.check(m), "onednn gelu_erf: a factor other than 0.5");
    }
}

}  // namespace
}  // namespace sy::onednn_test
