// Fusion: golden before/after text, kernel counts on real models, and unchanged results.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/reference/executor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "passes/fuse_ops.h"
#include "zoo/zoo.h"

namespace sy {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int primitive_calls(const ir::Module& m) {
  int n = 0;
  for (const ir::Expr& e : ir::post_order(m.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && !c->is_op())
      if (auto* f = c->callee->as<ir::FunctionNode>(); f && f->attrs.count("Primitive")) ++n;
  return n;
}

int op_calls(const ir::Module& m) {
  int n = 0;
  for (const ir::Expr& e : ir::post_order(m.main().body, true))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op()) ++n;
  return n;
}

TEST(FuseOps, GoldenConvBlock) {
  fs::path dir = fs::path(SY_SOURCE_DIR) / "tests" / "golden" / "fuse_ops";
  Result<ir::Module> in = ir::parse_module(read(dir / "conv_block.sy"));
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  ir::Module out = passes::fuse_ops(in.value());
  std::string got = ir::print_module(out);
  fs::path expected = dir / "conv_block.expected.sy";
  if (std::getenv("SY_UPDATE_GOLDEN")) std::ofstream(expected) << got;
  Result<ir::Module> want = ir::parse_module(read(expected));
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  EXPECT_EQ(got, ir::print_module(want.value()));
  EXPECT_EQ(primitive_calls(out), 6);
  EXPECT_EQ(op_calls(out), op_calls(in.value()));
}

// x * sigmoid(x) after a conv (SiLU, EfficientNet's activation): the conv's result has two users,
// both in one elementwise group, which joins the conv's group as its epilogue (the second conv's
// result is read by three ops of its epilogue); the add's result, read by the mean and by the
// squeeze-excitation multiply, stays the input of the mean's group.
TEST(FuseOps, ElementwiseDiamondJoinsItsProducer) {
  const char* text = R"(
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32], %v: Tensor[(8, 8, 1, 1), float32]) -> Tensor[(1, 8, 6, 6), float32] {
  %0 = nn.conv2d(%x, %w, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);
  %1 = sigmoid(%0);
  %2 = multiply(%0, %1);
  %3 = nn.conv2d(%2, %v, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1);
  %4 = sigmoid(%3);
  %5 = multiply(%3, %4);
  %6 = add(%5, %3);
  %7 = mean(%6, axes=[2, 3], keepdims=true);
  %8 = sigmoid(%7);
  multiply(%6, %8)
}
)";
  Result<ir::Module> in = ir::parse_module(text);
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  ir::Module out = passes::fuse_ops(in.value());
  std::vector<std::vector<std::string>> groups;
  for (const ir::Expr& e : ir::post_order(out.main().body))
    if (auto* c = e->as<ir::CallNode>(); c && !c->is_op())
      if (auto* f = c->callee->as<ir::FunctionNode>()) {
        groups.emplace_back();
        for (const ir::Expr& x : ir::post_order(f->body))
          if (auto* k = x->as<ir::CallNode>(); k && k->is_op()) groups.back().push_back(ops::op_name(k->op));
      }
  ASSERT_EQ(groups.size(), 3u) << ir::print_module(out);
  EXPECT_EQ(groups[0], (std::vector<std::string>{"nn.conv2d", "sigmoid", "multiply"}));
  EXPECT_EQ(groups[1], (std::vector<std::string>{"nn.conv2d", "sigmoid", "multiply", "add"}));
  EXPECT_EQ(groups[2], (std::vector<std::string>{"mean", "sigmoid", "multiply"}));
  EXPECT_EQ(op_calls(out), op_calls(in.value()));
  Tensor x(DType::f32, {1, 4, 6, 6}), w(DType::f32, {8, 4, 1, 1}), v(DType::f32, {8, 8, 1, 1});
  for (Tensor* t : {&x, &w, &v})
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
  auto a = reference::run_module(in.value(), {x, w, v}).value();
  auto b = reference::run_module(out, {x, w, v}).value();
  ASSERT_EQ(a.size(), 1u);
  for (int64_t i = 0; i < a[0].numel(); ++i) ASSERT_EQ(a[0].data<float>()[i], b[0].data<float>()[i]);
}

// A 3-D resize as the importer writes it: the planes resized, then the depths of the resized
// planes. Linear or cubic, the second starts its own kernel (inlined, every tap of the second
// recomputed the first's taps: a 3-D cubic resize's kernel was 6 MB of C); nearest resizes, an
// index map each, stay one kernel.
TEST(FuseOps, AnInterpolatingResizeDoesNotInlineAnother) {
  auto resize = [](const ir::Expr& x, std::vector<int64_t> size, const std::string& mode) {
    ops::Resize2dAttrs a;
    a.size = std::move(size);
    a.mode = mode;
    a.exclude_outside = mode == "cubic";
    return ir::call(ops::OpCode::Resize2d, {x}, a);
  };
  for (const std::string mode : {"cubic", "linear", "nearest"}) {
    ir::Expr x = ir::var("x", ir::tensor_type({1, 32, 1, 15}, DType::f32));
    ir::Expr planes = resize(x, {3, 9}, mode);
    ops::ReshapeAttrs rs;
    rs.newshape = {1, 1, 32, 27};
    ir::Expr depths = resize(ir::call(ops::OpCode::Reshape, {planes}, rs), {8, 27}, mode);
    ir::Module m;
    m.functions["main"] = ir::function({x}, ir::call(ops::OpCode::Relu, {depths}));
    ir::Module out = passes::fuse_ops(m);
    EXPECT_EQ(primitive_calls(out), mode == "nearest" ? 1 : 2) << mode << "\n" << ir::print_module(out);
    EXPECT_EQ(op_calls(out), op_calls(m));
  }
}

TEST(FuseOps, ResNet50KernelsAtMostHalfTheOps) {
  ir::Module m = zoo::build("resnet50", {});
  ir::Module f = passes::fuse_ops(m);
  EXPECT_EQ(op_calls(f), op_calls(m));
  EXPECT_LE(primitive_calls(f) * 2, op_calls(m)) << primitive_calls(f) << " kernels for " << op_calls(m) << " ops";
}

TEST(FuseOps, ResultsUnchanged) {
  ir::Module m = zoo::build("mobilenet_v2", {});
  ir::Module f = passes::fuse_ops(m);
  Tensor x(DType::f32, ir::shape_of(m.main().params[0]));
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
  auto a = reference::run_module(m, {x}).value();
  auto b = reference::run_module(f, {x}).value();
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k)
    for (int64_t i = 0; i < a[k].numel(); ++i) ASSERT_EQ(a[k].data<float>()[i], b[k].data<float>()[i]);
}

}  // namespace
}  // namespace sy
