// passes::simplify_arith drops the conv taps that only read padding (conv_dead_taps.h): an atrous
// conv whose dilation is as large as the plane becomes the conv of its live taps; one whose taps
// mostly read padding becomes a conv per region of outputs with the same live taps, joined by
// concatenations. Both with the reference executor's values, natively too. Convs that mostly read
// their input stay.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/reference/executor.h"
#include "ir/visitor.h"
#include "ir_count.h"
#include "native/compile.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "passes/simplify_arith.h"
#include "compiled_vs_reference.h"
#include "topi_test_data.h"

namespace sy {
namespace {

struct Geometry {
  int64_t C, O, H, W, K, groups;
  std::vector<int64_t> strides, padding, dilation;
};

ir::Module conv_module(const Geometry& g) {
  ir::Expr x = ir::var("x", ir::tensor_type({1, g.C, g.H, g.W}, DType::f32));
  auto a = std::make_shared<ops::Conv2dAttrs>();
  a->strides = g.strides;
  a->padding = g.padding;
  a->dilation = g.dilation;
  a->groups = g.groups;
  ir::Expr w = ir::constant(topitest::random(DType::f32, {g.O, g.C / g.groups, g.K, g.K}, -1, 1, 3));
  ir::Expr b = ir::constant(topitest::random(DType::f32, {g.O}, -1, 1, 4));
  ir::Module m;
  m.functions["main"] = ir::function({x}, ir::call(ops::OpCode::Relu, {ir::call(ops::OpCode::Conv2d, {x, w, b}, a)}));
  return m;
}

// The (only) conv's weight shape and attributes after the pass.
const ir::CallNode* conv_of(const ir::Module& m) {
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c->op == ops::OpCode::Conv2d) return c;
  return nullptr;
}

void expect_same_values(const ir::Module& m, const ir::Module& s, const Geometry& g) {
  Tensor x = topitest::random(DType::f32, {1, g.C, g.H, g.W}, -1, 1, 5);
  auto a = reference::run_module(m, {x}, {});
  auto b = reference::run_module(s, {x}, {});
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_EQ((*a)[0].shape(), (*b)[0].shape());
  for (int64_t i = 0; i < (*a)[0].numel(); ++i)
    ASSERT_NEAR((*a)[0].data<float>()[i], (*b)[0].data<float>()[i], 1e-5f * (1 + std::abs((*a)[0].data<float>()[i]))) << i;
}

TEST(ConvDeadTaps, AtrousConvsAsLargeAsThePlaneKeepTheirLiveTaps) {
  struct Case {
    Geometry g;
    int64_t kh, kw;                 // the kernel after the pass
    std::vector<int64_t> padding;   // and its padding
  };
  const std::vector<Case> cases = {
      // DeepLabV3's atrous pyramid on a 14x14 map: rates 24 and 36 leave the centre tap only.
      {{32, 16, 14, 14, 3, 1, {1, 1}, {24, 24, 24, 24}, {24, 24}}, 1, 1, {0, 0, 0, 0}},
      {{32, 16, 14, 14, 3, 1, {1, 1}, {36, 36, 36, 36}, {36, 36}}, 1, 1, {0, 0, 0, 0}},
      // Strided: tap 0 reads rows -8..-2, tap 2 rows 8..14 of a 7-row plane.
      {{8, 8, 7, 7, 3, 1, {2, 2}, {8, 8, 8, 8}, {8, 8}}, 1, 1, {0, 0, 0, 0}},
      // Depthwise 5x5, the width at rate 3 on 5 columns: its outer taps read padding only, the
      // next ones for 2 of the 5 columns (36% of the work reads the input: no regions).
      {{16, 16, 40, 5, 5, 16, {1, 1}, {2, 6, 2, 6}, {1, 3}}, 5, 3, {2, 3, 2, 3}},
      // Padding on one side only: the taps after the first read the bottom padding.
      {{4, 4, 5, 5, 3, 1, {1, 1}, {0, 0, 20, 0}, {10, 1}}, 1, 3, {0, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    const ir::Module m = conv_module(c.g);
    const ir::Module s = passes::simplify_arith(m);
    const ir::CallNode* conv = conv_of(s);
    ASSERT_NE(conv, nullptr);
    const Shape& w = ir::as_tensor(conv->args[1]->type).shape;
    EXPECT_EQ(w[2], c.kh);
    EXPECT_EQ(w[3], c.kw);
    EXPECT_EQ(conv->attrs_as<ops::Conv2dAttrs>().padding, c.padding);
    expect_same_values(m, s, c.g);
    native::Compiled nc = native::compile_native(m, native::CompileOptions{});
    nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, c.g.C, c.g.H, c.g.W}, -1, 1, 6)},
                                        "native, pad " + std::to_string(c.g.padding[0]));
  }
}

using irtest::count_op;

TEST(ConvDeadTaps, ConvsThatMostlyReadPaddingRunByRegions) {
  struct Case {
    Geometry g;
    int convs, concats;
  };
  const std::vector<Case> cases = {
      // DeepLabV3's rate 12 on a 14x14 map: an outer tap reads the input for 2 of the 14 rows
      // (rows 12-13 from output rows 0-1, and the reverse), 18% of the work. 3x3 regions.
      {{32, 16, 14, 14, 3, 1, {1, 1}, {12, 12, 12, 12}, {12, 12}}, 9, 4},
      // Strided, rate 8 on 9x9 (5x5 outputs): an outer tap reads the input for 1 of 5 (22%).
      {{8, 8, 9, 9, 3, 1, {2, 2}, {8, 8, 8, 8}, {8, 8}}, 9, 4},
      // DeepLabV3-ResNet-50's rate 12 on a 28x28 map: an outer tap reads 16 of the 28 rows, 51% of
      // the work; regions of 4x4 to 12x12 outputs.
      {{8, 8, 28, 28, 3, 1, {1, 1}, {12, 12, 12, 12}, {12, 12}}, 9, 4},
      // Depthwise, a tall plane and a narrow one: 3 bands of rows, one column.
      {{16, 16, 20, 3, 3, 16, {1, 1}, {4, 4, 4, 4}, {4, 4}}, 3, 1},
  };
  for (const Case& c : cases) {
    const ir::Module m = conv_module(c.g);
    const ir::Module s = passes::simplify_arith(m);
    EXPECT_EQ(count_op(s, ops::OpCode::Conv2d), c.convs) << c.g.H << "x" << c.g.W;
    EXPECT_EQ(count_op(s, ops::OpCode::Concat), c.concats) << c.g.H << "x" << c.g.W;
    for (const ir::Expr& e : ir::post_order(s.main().body)) {
      auto* k = e->as<ir::CallNode>();
      if (k && k->is_op() && k->op == ops::OpCode::Conv2d) {
        EXPECT_EQ(k->attrs_as<ops::Conv2dAttrs>().padding, (std::vector<int64_t>{0, 0, 0, 0}));
      }
    }
    expect_same_values(m, s, c.g);
    native::Compiled nc = native::compile_native(m, native::CompileOptions{});
    nativetest::expect_reference_values(m, nc, {topitest::random(DType::f32, {1, c.g.C, c.g.H, c.g.W}, -1, 1, 6)},
                                        "native, by regions, " + std::to_string(c.g.H) + "x" + std::to_string(c.g.W));
  }
}

TEST(ConvDeadTaps, ConvsThatMostlyReadTheirInputStay) {
  // Rate 2 on 8x8: 69% of the work reads the input; the usual 3x3 conv; 5x5 at rate 3 on 9x9,
  // strided (36%); a 3x3 conv on a 2x2 map (44%: four one-pixel convs would cost more than the
  // padding).
  for (const Geometry& g : {Geometry{8, 8, 8, 8, 3, 1, {1, 1}, {2, 2, 2, 2}, {2, 2}},
                            Geometry{8, 8, 9, 9, 5, 1, {2, 2}, {6, 6, 6, 6}, {3, 3}},
                            Geometry{8, 8, 14, 14, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
                            Geometry{8, 8, 2, 2, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}}}) {
    const ir::Module m = conv_module(g);
    const ir::Module s = passes::simplify_arith(m);
    EXPECT_EQ(ir::as_tensor(conv_of(s)->args[1]->type).shape, ir::as_tensor(conv_of(m)->args[1]->type).shape);
    EXPECT_EQ(conv_of(s)->attrs_as<ops::Conv2dAttrs>().padding, g.padding);
  }
}

}  // namespace
}  // namespace sy
