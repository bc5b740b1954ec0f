// The c_source backend against the reference executor: unary ops, broadcasting, constants,
// multi-output regions, save/load without a compiler, errors and rejection reasons.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "ops/op.h"
#include "target/host.h"
#include "backends/backend.h"
#include "backends/c_source/c_source.h"
#include "backends/reference/executor.h"
#include "ir/module.h"
#include "ops/attrs.h"

namespace sy::backends {
namespace {

using ir::Expr;
using ops::OpCode;

const Backend& backend() { return BackendRegistry::global().get("c_source"); }

Expr f32_var(const std::string& name, Shape s) { return ir::var(name, ir::tensor_type(std::move(s), DType::f32)); }

// A region as the partitioner hands it over.
ExternFunction extern_fn(const std::string& symbol, std::vector<Expr> params, Expr body) {
  return {symbol, ir::function(std::move(params), std::move(body), {{"Compiler", "c_source"}, {"global_symbol", symbol}})};
}

std::vector<Tensor> reference(const ExternFunction& f, const std::vector<Tensor>& inputs) {
  auto* fn = f.function->as<ir::FunctionNode>();
  ir::Module m;
  m.functions["main"] = ir::function(fn->params, fn->body);
  auto r = reference::run_module(m, inputs);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r.value() : std::vector<Tensor>{};
}

Tensor random(Shape s, float lo = -3.0f, float hi = 3.0f, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Tensor t(DType::f32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(gen);
  return t;
}

std::vector<Tensor> random_inputs(const ExternFunction& f, float lo = -3.0f, float hi = 3.0f) {
  std::vector<Tensor> in;
  for (const Expr& p : f.function->as<ir::FunctionNode>()->params)
    in.push_back(random(ir::shape_of(p), lo, hi, static_cast<unsigned>(in.size() + 1)));
  return in;
}

void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape()) << what << " output " << k;
    for (int64_t i = 0; i < got[k].numel(); ++i) {
      double g = got[k].get_as_double(i), w = want[k].get_as_double(i);
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << what << " output " << k << " element " << i;
      } else if (std::isinf(w)) {
        EXPECT_EQ(g, w) << what << " output " << k << " element " << i;
      } else {
        ASSERT_NEAR(g, w, 2e-6 * std::max(1.0, std::abs(w))) << what << " output " << k << " element " << i;
      }
    }
  }
}

// Compiles all functions into one module and checks each against the reference.
void check_all(const std::vector<ExternFunction>& fns, float lo = -3.0f, float hi = 3.0f) {
  auto m = backend().compile(fns, target::host());
  for (const ExternFunction& f : fns) {
    auto in = random_inputs(f, lo, hi);
    expect_close(m->run(f.symbol, in), reference(f, in), f.symbol);
  }
}

const std::string& source_of(const RuntimeModule& m) { return dynamic_cast<const c_source::CModule&>(m).source(); }

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

struct ScopedEnv {
  explicit ScopedEnv(const char* value) { setenv("CC", value, 1); }
  ~ScopedEnv() { unsetenv("CC"); }
};

TEST(CSource, IsRegisteredWithNoComposites) {
  ASSERT_NE(BackendRegistry::global().find("c_source"), nullptr);
  EXPECT_TRUE(backend().composite_rules().empty());
}

TEST(CSource, UnaryOpsMatchReference) {
  struct U { OpCode op; ir::AttrsPtr attrs; float lo = -3.0f, hi = 3.0f; };
  auto at = [](auto a) { return ir::AttrsPtr(std::make_shared<decltype(a)>(a)); };
  ops::GeluAttrs gelu_tanh;
  gelu_tanh.approximate = "tanh";
  ops::ClipAttrs clip;
  clip.min = -1.0;
  clip.max = 0.5;
  ops::ClipAttrs clip_hi;
  clip_hi.max = 6.0;
  ops::AlphaAttrs alpha;
  alpha.alpha = 0.3;
  std::vector<U> cases = {
      {OpCode::Neg, nullptr}, {OpCode::Abs, nullptr}, {OpCode::Exp, nullptr}, {OpCode::Log, nullptr, 0.01f, 5},
      {OpCode::Sqrt, nullptr, 0, 5}, {OpCode::Reciprocal, nullptr, 0.1f, 5}, {OpCode::Sin, nullptr},
      {OpCode::Cos, nullptr}, {OpCode::Tan, nullptr, -1, 1}, {OpCode::Asin, nullptr, -1, 1},
      {OpCode::Acos, nullptr, -1, 1}, {OpCode::Atan, nullptr}, {OpCode::Sinh, nullptr}, {OpCode::Cosh, nullptr},
      {OpCode::Asinh, nullptr}, {OpCode::Acosh, nullptr, 1, 5}, {OpCode::Atanh, nullptr, -0.9f, 0.9f},
      {OpCode::Tanh, nullptr}, {OpCode::Sigmoid, nullptr, -30, 30}, {OpCode::Relu, nullptr}, {OpCode::Erf, nullptr},
      {OpCode::Floor, nullptr}, {OpCode::Ceil, nullptr}, {OpCode::Round, nullptr}, {OpCode::Sign, nullptr},
      {OpCode::Identity, nullptr}, {OpCode::Softplus, nullptr, -30, 30}, {OpCode::Softsign, nullptr},
      {OpCode::Gelu, nullptr}, {OpCode::Gelu, at(gelu_tanh)}, {OpCode::HardSigmoid, nullptr},
      {OpCode::HardSwish, nullptr}, {OpCode::LeakyRelu, at(alpha)}, {OpCode::Elu, at(alpha)},
      {OpCode::Celu, at(alpha)}, {OpCode::Selu, nullptr}, {OpCode::ThresholdedRelu, at(alpha)},
      {OpCode::Mish, nullptr}, {OpCode::Clip, at(clip)}, {OpCode::Clip, at(clip_hi), -3, 9},
  };
  // Grouped by input range, one module per group.
  std::map<std::pair<float, float>, std::vector<ExternFunction>> groups;
  for (size_t i = 0; i < cases.size(); ++i) {
    Expr x = f32_var("x", {3, 37});
    Expr body = ir::call(cases[i].op, {x}, cases[i].attrs);
    ASSERT_TRUE(backend().supports_op(*body->as<ir::CallNode>()).ok) << ops::op_name(cases[i].op);
    groups[{cases[i].lo, cases[i].hi}].push_back(extern_fn("c_source_" + std::to_string(i), {x}, body));
  }
  for (auto& [range, fns] : groups) check_all(fns, range.first, range.second);
}

TEST(CSource, BinaryOpsBroadcastLikeNumpy) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {3, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{4}, {}}, {{}, {5}}, {{5, 1, 3}, {1, 4, 1}}, {{}, {}}};
  std::vector<ExternFunction> fns;
  for (OpCode op : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div, OpCode::Maximum, OpCode::Minimum,
                    OpCode::Pow, OpCode::PRelu}) {
    for (auto& [sa, sb] : shapes) {
      if (op == OpCode::PRelu && ir::shape_of(ir::call(OpCode::Add, {f32_var("a", sa), f32_var("b", sb)})) != sa)
        continue;  // the slope must broadcast to x
      Expr a = f32_var("a", sa), b = f32_var("b", sb);
      fns.push_back(extern_fn("c_source_" + std::to_string(fns.size()), {a, b}, ir::call(op, {a, b})));
    }
  }
  check_all(fns);
}

TEST(CSource, ChainIsOneFusedLoopNest) {
  // relu(sigmoid(x * s + b) - 0.5): five ops, one pass over memory, no intermediate buffers.
  Expr x = f32_var("x", {2, 3, 16}), s = f32_var("s", {2, 3, 16}), b = f32_var("b", {16});
  Expr y = ir::call(OpCode::Add, {ir::call(OpCode::Mul, {x, s}), b});
  y = ir::call(OpCode::Sub, {ir::call(OpCode::Sigmoid, {y}), ir::constant(Tensor::scalar<float>(0.5f))});
  y = ir::call(OpCode::Relu, {y});
  ExternFunction f = extern_fn("c_source_0", {x, s, b}, y);
  auto m = backend().compile({f}, target::host());
  auto in = random_inputs(f);
  expect_close(m->run("c_source_0", in), reference(f, in), "chain");
  const std::string& src = source_of(*m);
  EXPECT_EQ(count(src, "for ("), 2) << src;         // (6, 16): rows of x and s, b repeated per row
  EXPECT_EQ(count(src, "y0["), 1) << src;           // one store
  EXPECT_NE(src.find("i0 < 6"), std::string::npos) << src;
  EXPECT_NE(src.find("0.5f"), std::string::npos) << src;  // a scalar constant becomes a literal

  // Same shapes throughout: a single flat loop.
  Expr u = f32_var("u", {2, 3, 4}), v = f32_var("v", {2, 3, 4});
  auto flat = backend().compile({extern_fn("c_source_1", {u, v}, ir::call(OpCode::Exp, {ir::call(OpCode::Add, {u, v})}))}, target::host());
  EXPECT_EQ(count(source_of(*flat), "for ("), 1) << source_of(*flat);
  EXPECT_NE(source_of(*flat).find("i0 < 24"), std::string::npos) << source_of(*flat);
}

TEST(CSource, WeightsArePassedNotEmbedded) {
  Expr x = f32_var("x", {4, 8});
  Tensor w = random({8}, -1, 1, 7);
  w.data<float>()[0] = 12345.5f;  // recognisable
  ExternFunction f = extern_fn("c_source_0", {x}, ir::call(OpCode::Mul, {ir::call(OpCode::Add, {x, ir::constant(w)}), ir::constant(Tensor::scalar<float>(2.0f))}));
  auto m = backend().compile({f}, target::host());
  auto in = random_inputs(f);
  expect_close(m->run("c_source_0", in), reference(f, in), "weights");
  EXPECT_EQ(source_of(*m).find("12345"), std::string::npos);
  EXPECT_NE(source_of(*m).find("w0 = in[1]"), std::string::npos) << source_of(*m);
}

TEST(CSource, MultiOutputRegion) {
  // Outputs of two shapes (two loop nests) and a parameter passed through.
  Expr x = f32_var("x", {4, 8}), y = f32_var("y", {4, 1});
  Expr r = ir::call(OpCode::Relu, {ir::call(OpCode::Add, {x, y})});
  Expr e = ir::call(OpCode::Exp, {y});
  Expr s = ir::call(OpCode::Mul, {r, e});
  ExternFunction f = extern_fn("c_source_0", {x, y}, ir::tuple({e, r, s, x}));
  auto m = backend().compile({f}, target::host());
  auto in = random_inputs(f);
  auto out = m->run("c_source_0", in);
  ASSERT_EQ(out.size(), 4u);
  expect_close(out, reference(f, in), "multi-output");
  // The (4, 8) nest reads e from y0, written by the (4, 1) nest, instead of recomputing it.
  EXPECT_EQ(count(source_of(*m), "expf(t"), 1) << source_of(*m);
}

TEST(CSource, LargeTensorsUseOpenMP) {
  Expr x = f32_var("x", {64, 1024}), b = f32_var("b", {1024});
  ExternFunction f = extern_fn("c_source_0", {x, b}, ir::call(OpCode::Tanh, {ir::call(OpCode::Add, {x, b})}));
  auto m = backend().compile({f}, target::host());
  EXPECT_NE(source_of(*m).find("#pragma omp parallel for"), std::string::npos);
  auto in = random_inputs(f);
  expect_close(m->run("c_source_0", in), reference(f, in), "large");
}

TEST(CSource, SaveLoadRoundTripNeedsNoCompiler) {
  Expr x = f32_var("x", {3, 5}), b = f32_var("b", {5});
  Expr w = ir::constant(random({3, 5}, -1, 1, 9));
  std::vector<ExternFunction> fns = {
      extern_fn("c_source_1", {x, b}, ir::call(OpCode::Sigmoid, {ir::call(OpCode::Sub, {x, b})})),
      extern_fn("c_source_0", {x}, ir::tuple({ir::call(OpCode::Mul, {x, w}), ir::call(OpCode::Neg, {x})}))};
  auto compiled = backend().compile(fns, target::host());
  std::vector<Tensor> in1 = random_inputs(fns[0]), in0 = random_inputs(fns[1]);
  auto want1 = compiled->run("c_source_1", in1), want0 = compiled->run("c_source_0", in0);
  const std::string bytes = compiled->save(), src = source_of(*compiled);
  compiled.reset();

  ScopedEnv no_compiler("/nonexistent/cc");
  std::vector<ExternFunction> reordered = {fns[1], fns[0]};  // order does not matter
  auto loaded = backend().load(bytes, reordered);
  EXPECT_EQ(source_of(*loaded), src);
  auto got1 = loaded->run("c_source_1", in1), got0 = loaded->run("c_source_0", in0);
  ASSERT_EQ(got0.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(got0[k].bitwise_equal(want0[k])) << k;
  EXPECT_TRUE(got1[0].bitwise_equal(want1[0]));
  EXPECT_EQ(loaded->save(), bytes);
}

TEST(CSource, LoadRejectsForeignOrCorruptBytes) {
  Expr x = f32_var("x", {3});
  auto m = backend().compile({extern_fn("c_source_0", {x}, ir::call(OpCode::Exp, {x}))}, target::host());
  Expr y = f32_var("y", {4});
  try {
    backend().load(m->save(), {extern_fn("c_source_0", {y}, ir::call(OpCode::Exp, {y}))});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not match"), std::string::npos) << e.what();
  }
  try {
    backend().load("not a shared library", {extern_fn("c_source_0", {x}, ir::call(OpCode::Exp, {x}))});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load"), std::string::npos) << e.what();
  }
}

TEST(CSource, CompilerErrors) {
  Expr x = f32_var("x", {3});
  std::vector<ExternFunction> fns = {extern_fn("c_source_0", {x}, ir::call(OpCode::Exp, {x}))};
  {
    ScopedEnv env("/nonexistent/cc");
    try {
      backend().compile(fns, target::host());
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("c_source: no C compiler"), std::string::npos) << e.what();
    }
  }
  {
    ScopedEnv env("cc -include /nonexistent/missing_header.h");
    try {
      backend().compile(fns, target::host());
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the C compiler failed"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("missing_header.h"), std::string::npos) << e.what();  // cc's own words
    }
  }
}

TEST(CSource, RunChecksInputs) {
  Expr x = f32_var("x", {3});
  auto m = backend().compile({extern_fn("c_source_0", {x}, ir::call(OpCode::Exp, {x}))}, target::host());
  EXPECT_THROW(m->run("c_source_0", {random({4})}), Error);
  EXPECT_THROW(m->run("c_source_0", {}), Error);
  EXPECT_THROW(m->run("nope", {random({3})}), Error);
}

TEST(CSource, RejectionReasons) {
  auto reason = [](const Expr& e) {
    Verdict v = backend().supports_op(*e->as<ir::CallNode>());
    EXPECT_FALSE(v.ok);
    return v.reason;
  };
  Expr i = ir::var("i", ir::tensor_type({4}, DType::i64));
  EXPECT_EQ(reason(ir::call(OpCode::Add, {i, i})), "c_source: dtype int64 not supported (float32 only)");
  Expr img = f32_var("img", {1, 3, 8, 8}), w = f32_var("w", {4, 3, 3, 3});
  EXPECT_EQ(reason(ir::call(OpCode::Conv2d, {img, w})), "c_source: op nn.conv2d is not elementwise");
  EXPECT_EQ(reason(ir::call(OpCode::Softmax, {img})), "c_source: op nn.softmax is not elementwise");
  Expr x = f32_var("x", {4});
  ops::CastAttrs to_f32;
  EXPECT_EQ(reason(ir::call(OpCode::Cast, {x}, to_f32)), "c_source: op cast with to=float32 has no C implementation");
  EXPECT_EQ(reason(ir::call(OpCode::IsNaN, {x})), "c_source: dtype bool not supported (float32 only)");
  EXPECT_TRUE(backend().supports_op(*ir::call(OpCode::Add, {x, x})->as<ir::CallNode>()).ok);
}

}  // namespace
}  // namespace sy::backends
