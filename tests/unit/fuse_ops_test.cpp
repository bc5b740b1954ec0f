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
