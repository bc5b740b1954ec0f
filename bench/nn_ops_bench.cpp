// Timing of the native nn kernels (not a test): GFLOP/s of typical ResNet-50 / MobileNetV2 conv
// layers and a BERT-sized dense, at 1 and 2 threads, through the real pipeline (fuse_ops,
// prepack_constants, lower_function, C build), for a target, and as a fraction of the machine's
// SGEMM peak (oneDNN's dnnl_sgemm, 2048^3, measured first at the same thread counts).
// Usage: sy_nn_bench [repeats] [filter-substring] [target string, default: the host]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#ifdef SY_HAVE_DNNL
#include <dnnl.h>
#endif

#include "codegen/c/build.h"
#include "ir/module.h"
#include "native/lower_function.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "passes/fuse_ops.h"
#include "strategy/strategy.h"
#include "target/host.h"
#include "topi/topi.h"

using namespace sy;

namespace {

Tensor random(Shape s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Tensor t(DType::f32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

struct Case {
  std::string name;
  double flops;
  ir::Module module;  // main(x) = one fused group
  Shape input;
};

// pad_w < 0: the same padding on both axes (Inception's 1x7 and 7x1 kernels pad one axis only).
Case conv_case(const std::string& name, Shape x, Shape w, int64_t stride, int64_t pad, int64_t groups, bool relu,
               int64_t pad_w = -1) {
  if (pad_w < 0) pad_w = pad;
  ops::Conv2dAttrs a;
  a.strides = {stride, stride};
  a.padding = {pad, pad_w, pad, pad_w};
  a.groups = groups;
  ir::Expr xv = ir::var("x", ir::tensor_type(x, DType::f32));
  ir::Expr body = ir::call(ops::OpCode::Conv2d, {xv, ir::constant(random(w, 2)), ir::constant(random({w[0]}, 3))}, a);
  if (relu) body = ir::call(ops::OpCode::Relu, {body});
  const Shape& os = ir::shape_of(body);
  Case c{name, 2.0 * double(os[0] * os[1] * os[2] * os[3]) * double(w[1] * w[2] * w[3]), {}, x};
  c.module.functions["main"] = ir::function({xv}, body);
  return c;
}

// EfficientNet's convolutions: x * sigmoid(x) (SiLU) fused after the conv and its bias.
Case conv_silu_case(const std::string& name, Shape x, Shape w, int64_t stride, int64_t pad, int64_t groups) {
  Case c = conv_case(name, std::move(x), std::move(w), stride, pad, groups, false);
  ir::Expr& f = c.module.functions["main"];
  const auto* fn = static_cast<const ir::FunctionNode*>(f.get());
  ir::Expr conv = fn->body;
  f = ir::function(fn->params, ir::call(ops::OpCode::Mul, {conv, ir::call(ops::OpCode::Sigmoid, {conv})}));
  return c;
}

Case dense_case(const std::string& name, int64_t M, int64_t K, int64_t N) {
  ir::Expr xv = ir::var("x", ir::tensor_type({M, K}, DType::f32));
  ir::Expr body = ir::call(ops::OpCode::Dense, {xv, ir::constant(random({N, K}, 4)), ir::constant(random({N}, 5))});
  Case c{name, 2.0 * double(M) * double(K) * double(N), {}, {M, K}};
  c.module.functions["main"] = ir::function({xv}, body);
  return c;
}

Case matmul_case(const std::string& name, Shape a, Shape b, bool const_b) {
  ir::Expr xv = ir::var("x", ir::tensor_type(a, DType::f32));
  std::vector<ir::Expr> params{xv};
  ir::Expr bv = const_b ? ir::constant(random(b, 6)) : ir::var("b", ir::tensor_type(b, DType::f32));
  if (!const_b) params.push_back(bv);
  ir::Expr body = ir::call(ops::OpCode::MatMul, {xv, bv});
  const Shape& os = ir::shape_of(body);
  double flops = 2.0 * double(a.back());
  for (int64_t d : os) flops *= double(d);
  Case c{name, flops, {}, a};
  c.module.functions["main"] = ir::function(params, body);
  return c;
}

Case unary_case(const std::string& name, ops::OpCode op, ir::AttrsPtr attrs, Shape x, int extra, double flops) {
  ir::Expr xv = ir::var("x", ir::tensor_type(x, DType::f32));
  std::vector<ir::Expr> args{xv};
  for (int i = 0; i < extra; ++i) args.push_back(ir::constant(random({x.back()}, 7 + i)));
  ir::Expr body = ir::call(op, args, attrs);
  Case c{name, flops, {}, x};
  c.module.functions["main"] = ir::function({xv}, body);
  return c;
}

Case pool_case(const std::string& name, ops::OpCode op, Shape x, int64_t k, int64_t stride, int64_t pad) {
  auto a = std::make_shared<ops::Pool2dAttrs>();
  a->kernel = {k, k};
  a->strides = {stride, stride};
  a->padding = {pad, pad, pad, pad};
  ir::Expr xv = ir::var("x", ir::tensor_type(x, DType::f32));
  ir::Expr body = ir::call(op, {xv}, a);
  const Shape& os = ir::shape_of(body);
  Case c{name, double(os[0] * os[1] * os[2] * os[3] * k * k), {}, x};
  c.module.functions["main"] = ir::function({xv}, body);
  return c;
}

// Resize of an NCHW map to oh x ow (image.resize2d, half-pixel centres); its FLOP: the taps'
// multiply-adds per output element (4 linear, 16 cubic).
Case resize_case(const std::string& name, const std::string& mode, Shape x, int64_t oh, int64_t ow) {
  auto a = std::make_shared<ops::Resize2dAttrs>();
  a->size = {oh, ow};
  a->mode = mode;
  a->coordinate_transformation_mode = "half_pixel";
  ir::Expr xv = ir::var("x", ir::tensor_type(x, DType::f32));
  const double taps = mode == "cubic" ? 16 : mode == "linear" ? 4 : 0;
  Case c{name, double(x[0] * x[1] * oh * ow) * 2 * taps, {}, x};
  c.module.functions["main"] = ir::function({xv}, ir::call(ops::OpCode::Resize2d, {xv}, a));
  return c;
}

double g_peak[3] = {0, 0, 0};  // SGEMM GFLOP/s at 1 and 2 threads (0: unknown)

#ifdef SY_HAVE_DNNL
// The peak of the target's ISA, not the host's: an AVX2 artifact's kernels are compared with an
// AVX2 SGEMM (oneDNN's ISA cap must be set before its first call).
void measure_sgemm_peak(const target::Target& tgt) {
  const char* isa = "host ISA";
  if (tgt.isa_name() == "avx2") {
    isa = dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2) == dnnl_success ? "capped at avx2" : "avx2 cap refused";
  } else if (tgt.isa_name() != "avx512") {
    isa = "host ISA, above the target's";
  }
  const int64_t n = 2048;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<double> t;
    for (int i = 0; i < 8; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      if (i >= 2) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    g_peak[threads] = 2.0 * n * n * n / t[t.size() / 2] / 1e9;
  }
  std::printf("%-32s %s %-22s  1T %8s    %6.1f GFLOP/s  2T %8s    %6.1f GFLOP/s\n", "SGEMM peak: dnnl_sgemm 2048^3",
              "         ", isa, "", g_peak[1], "", g_peak[2]);
}
#endif

void run_case(const Case& c, int repeats, bool prepack, const target::Target& tgt) {
  ir::Module fused = passes::fuse_ops(c.module);
  int packed = 0;
  if (prepack) fused = topi::prepack_constants(fused, tgt, &packed);
  auto* call = fused.main().body->as<ir::CallNode>();
  auto* fn = call ? call->callee->as<ir::FunctionNode>() : nullptr;
  if (!fn) {
    std::printf("%-34s: not a single fused group\n", c.name.c_str());
    return;
  }
  te::Knobs knobs;
  if (const char* cfg = std::getenv("SY_KNOBS")) {  // e.g. "tile_m=8 tile_n=32"
    std::string all = cfg;
    size_t pos = 0;
    while (pos < all.size()) {
      size_t end = all.find(' ', pos);
      std::string kv = all.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if (kv.find('=') != std::string::npos) knobs.set(kv.substr(0, kv.find('=')), std::stoll(kv.substr(kv.find('=') + 1)));
      if (end == std::string::npos) break;
      pos = end + 1;
    }
  }
  native::LowerFunctionOptions lo;
  lo.knobs = &knobs;
  lo.target = &tgt;
  // SY_IMPL=NAME (e.g. conv2d.depthwise_plane): that implementation where it applies, else the default.
  ir::Expr chosen = ir::function(fn->params, fn->body, fn->attrs);
  if (const char* impl = std::getenv("SY_IMPL")) {
    const ir::CallNode* anchor = strategy::anchor_of(*fn);
    for (const auto& a : strategy::applicable(*anchor, tgt).entries)
      if (a.impl->name == impl) chosen = strategy::with_choice(*fn, strategy::Choice{impl, "", "SY_IMPL", false, {}, {}, ""});
  }
  // SY_KEPT="nhwc in=0 out": the group takes and gives those values kept in that layout, as
  // between two calls that keep it (native/kept_layouts.h); the random inputs stand for either.
  if (const char* kept = std::getenv("SY_KEPT")) {
    const auto* cf = chosen->as<ir::FunctionNode>();
    ir::FuncAttrs attrs = cf->attrs;
    attrs[topi::kKeptLayoutAttr] = kept;
    chosen = ir::function(cf->params, cf->body, attrs);
  }
  fn = chosen->as<ir::FunctionNode>();
  tir::PrimFunc f = native::lower_function(*fn, "kernel", lo);
  if (std::getenv("SY_DUMP_C")) std::printf("%s\n", codegen::generate_c({f}).c_str());
  codegen::BuildOptions bo;
  bo.externs = topi::extern_table();
  bo.compile.target_flags = tgt.compiler_flags();
  bo.target = tgt;  // its -codegen too
  auto mod = codegen::build({f}, bo);
  Tensor x = random(c.input, 1);
  std::vector<Tensor> outs;
  std::vector<void*> args;
  std::vector<Tensor> extra;
  extra.reserve(call->args.size());
  for (const ir::Expr& a : call->args) {
    if (auto* k = a->as<ir::ConstantNode>()) {
      args.push_back(const_cast<void*>(k->value.raw()));
    } else if (a == fused.main().params[0]) {
      args.push_back(x.raw());
    } else {
      extra.push_back(random(ir::shape_of(a), 9));
      args.push_back(extra.back().raw());
    }
  }
  outs.emplace_back(ir::dtype_of(fused.main().body), ir::shape_of(fused.main().body));
  args.push_back(outs.back().raw());
  std::printf("%-32s %s %-22s", c.name.c_str(), prepack ? (packed ? "prepacked" : "unpacked ") : "in-kernel",
              knobs.to_string().c_str());
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (int i = 0; i < 3; ++i) mod->call("kernel", args);
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      mod->call("kernel", args);
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    const double med = t[t.size() / 2];
    const double gf = c.flops / med / 1e9;
    std::printf("  %dT %8.3f ms %6.1f GFLOP/s", threads, med * 1e3, gf);
    if (g_peak[threads] > 0) std::printf(" (%3.0f%%)", 100.0 * gf / g_peak[threads]);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  const std::string filter = argc > 2 ? argv[2] : "";
  const target::Target tgt = argc > 3 ? target::parse(argv[3]) : target::host();
  std::printf("target: %s\n", tgt.str().c_str());
#ifdef SY_HAVE_DNNL
  measure_sgemm_peak(tgt);
#endif
  std::vector<Case> cases = {
      conv_case("conv3x3 64->64 56x56 +relu", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1, true),
      conv_case("conv1x1 256->64 56x56 +relu", {1, 256, 56, 56}, {64, 256, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 64->256 56x56", {1, 64, 56, 56}, {256, 64, 1, 1}, 1, 0, 1, false),
      conv_case("conv3x3 128->128 28x28 +relu", {1, 128, 28, 28}, {128, 128, 3, 3}, 1, 1, 1, true),
      conv_case("conv3x3 256->256 14x14 +relu", {1, 256, 14, 14}, {256, 256, 3, 3}, 1, 1, 1, true),
      conv_case("conv3x3 512->512 7x7 +relu", {1, 512, 7, 7}, {512, 512, 3, 3}, 1, 1, 1, true),
      conv_case("conv1x1 256->1024 14x14 +relu", {1, 256, 14, 14}, {1024, 256, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 1024->256 14x14 +relu", {1, 1024, 14, 14}, {256, 1024, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 256->128 56x56 +relu", {1, 256, 56, 56}, {128, 256, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 512->128 28x28 +relu", {1, 512, 28, 28}, {128, 512, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 128->512 28x28", {1, 128, 28, 28}, {512, 128, 1, 1}, 1, 0, 1, false),
      conv_case("conv1x1 2048->512 7x7 +relu", {1, 2048, 7, 7}, {512, 2048, 1, 1}, 1, 0, 1, true),
      conv_case("conv7x7 3->64 s2 224x224 +relu", {1, 3, 224, 224}, {64, 3, 7, 7}, 2, 3, 1, true),
      conv_case("conv3x3 s2 128->128 56x56", {1, 128, 56, 56}, {128, 128, 3, 3}, 2, 1, 1, true),
      conv_case("conv3x3 s2 256->256 28x28", {1, 256, 28, 28}, {256, 256, 3, 3}, 2, 1, 1, true),
      conv_case("conv3x3 s2 512->512 14x14", {1, 512, 14, 14}, {512, 512, 3, 3}, 2, 1, 1, true),
      conv_case("conv3x3 s2 3->32 224x224 +relu", {1, 3, 224, 224}, {32, 3, 3, 3}, 2, 1, 1, true),
      conv_case("conv1x1 32->16 112x112", {1, 32, 112, 112}, {16, 32, 1, 1}, 1, 0, 1, false),
      conv_case("conv1x1 24->144 56x56 +relu", {1, 24, 56, 56}, {144, 24, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 16->96 112x112 +clip", {1, 16, 112, 112}, {96, 16, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 144->24 56x56", {1, 144, 56, 56}, {24, 144, 1, 1}, 1, 0, 1, false),
      conv_case("conv1x1 384->64 14x14", {1, 384, 14, 14}, {64, 384, 1, 1}, 1, 0, 1, false),
      conv_case("conv1x1 960->320 7x7", {1, 960, 7, 7}, {320, 960, 1, 1}, 1, 0, 1, false),
      conv_case("conv1x1 160->960 7x7 +relu", {1, 160, 7, 7}, {960, 160, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 320->1280 7x7 +relu", {1, 320, 7, 7}, {1280, 320, 1, 1}, 1, 0, 1, true),
      conv_silu_case("conv1x1 80->480 14x14 +silu", {1, 80, 14, 14}, {480, 80, 1, 1}, 1, 0, 1),
      conv_case("conv1x1 80->480 14x14", {1, 80, 14, 14}, {480, 80, 1, 1}, 1, 0, 1, false),
      conv_silu_case("conv1x1 192->1152 7x7 +silu", {1, 192, 7, 7}, {1152, 192, 1, 1}, 1, 0, 1),
      conv_silu_case("conv1x1 24->144 56x56 +silu", {1, 24, 56, 56}, {144, 24, 1, 1}, 1, 0, 1),
      conv_silu_case("depthwise3x3 480 14x14 +silu", {1, 480, 14, 14}, {480, 1, 3, 3}, 1, 1, 480),
      conv_case("depthwise3x3 480 14x14", {1, 480, 14, 14}, {480, 1, 3, 3}, 1, 1, 480, false),
      conv_case("conv1x1 96->576 14x14 +relu", {1, 96, 14, 14}, {576, 96, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 64->384 14x14 +relu", {1, 64, 14, 14}, {384, 64, 1, 1}, 1, 0, 1, true),
      // DenseNet-121's bottlenecks: 128 outputs from 256..1024 input channels, BN+ReLU after.
      conv_case("conv1x1 288->128 28x28 +relu", {1, 288, 28, 28}, {128, 288, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 288->128 14x14 +relu", {1, 288, 14, 14}, {128, 288, 1, 1}, 1, 0, 1, true),
      conv_case("conv1x1 256->128 14x14 +relu", {1, 256, 14, 14}, {128, 256, 1, 1}, 1, 0, 1, true),
      // ... and its growth convs: 32 outputs from 128 channels, 3x3, on every plane size.
      conv_case("conv3x3 128->32 56x56", {1, 128, 56, 56}, {32, 128, 3, 3}, 1, 1, 1, false),
      conv_case("conv3x3 128->32 28x28", {1, 128, 28, 28}, {32, 128, 3, 3}, 1, 1, 1, false),
      conv_case("conv3x3 128->32 14x14", {1, 128, 14, 14}, {32, 128, 3, 3}, 1, 1, 1, false),
      conv_case("conv3x3 128->32 7x7", {1, 128, 7, 7}, {32, 128, 3, 3}, 1, 1, 1, false),
      // Inception-v3's: odd planes (149, 35, 17), 5x5, and 1x7 / 7x1 kernels.
      conv_case("conv3x3 32->32 149x149 +relu", {1, 32, 149, 149}, {32, 32, 3, 3}, 1, 0, 1, true),
      conv_case("conv3x3 64->96 35x35 +relu", {1, 64, 35, 35}, {96, 64, 3, 3}, 1, 1, 1, true),
      conv_case("conv5x5 48->64 35x35 +relu", {1, 48, 35, 35}, {64, 48, 5, 5}, 1, 2, 1, true),
      conv_case("conv1x1 288->64 35x35 +relu", {1, 288, 35, 35}, {64, 288, 1, 1}, 1, 0, 1, true),
      conv_case("conv7x1 192->192 17x17 +relu", {1, 192, 17, 17}, {192, 192, 7, 1}, 1, 3, 1, true, 0),
      conv_case("conv1x7 160->160 17x17 +relu", {1, 160, 17, 17}, {160, 160, 1, 7}, 1, 0, 1, true, 3),
      // A small YOLO-style detector's backbone: SiLU convs of few channels on large planes.
      conv_silu_case("conv3x3 s2 3->16 256x256 +silu", {1, 3, 256, 256}, {16, 3, 3, 3}, 2, 1, 1),
      conv_silu_case("conv3x3 s2 16->32 128x128 +silu", {1, 16, 128, 128}, {32, 16, 3, 3}, 2, 1, 1),
      conv_silu_case("conv3x3 32->32 64x64 +silu", {1, 32, 64, 64}, {32, 32, 3, 3}, 1, 1, 1),
      conv_silu_case("conv3x3 s2 32->64 64x64 +silu", {1, 32, 64, 64}, {64, 32, 3, 3}, 2, 1, 1),
      conv_silu_case("conv3x3 64->64 32x32 +silu", {1, 64, 32, 32}, {64, 64, 3, 3}, 1, 1, 1),
      conv_silu_case("conv3x3 128->64 32x32 +silu", {1, 128, 32, 32}, {64, 128, 3, 3}, 1, 1, 1),
      conv_case("depthwise3x3 32 112x112 +relu", {1, 32, 112, 112}, {32, 1, 3, 3}, 1, 1, 32, true),
      conv_case("depthwise3x3 s2 144 56x56", {1, 144, 56, 56}, {144, 1, 3, 3}, 2, 1, 144, true),
      conv_case("depthwise3x3 576 14x14", {1, 576, 14, 14}, {576, 1, 3, 3}, 1, 1, 576, true),
      conv_case("depthwise3x3 960 7x7", {1, 960, 7, 7}, {960, 1, 3, 3}, 1, 1, 960, true),
      conv_case("depthwise3x3 192 28x28", {1, 192, 28, 28}, {192, 1, 3, 3}, 1, 1, 192, true),
      conv_case("depthwise3x3 s2 96 112x112", {1, 96, 112, 112}, {96, 1, 3, 3}, 2, 1, 96, true),
      // EfficientNet's 5x5 depthwise convs, strided and not.
      conv_case("depthwise5x5 s2 144 56x56", {1, 144, 56, 56}, {144, 1, 5, 5}, 2, 2, 144, true),
      conv_case("depthwise5x5 s2 672 14x14", {1, 672, 14, 14}, {672, 1, 5, 5}, 2, 2, 672, true),
      conv_case("depthwise5x5 672 14x14", {1, 672, 14, 14}, {672, 1, 5, 5}, 1, 2, 672, true),
      conv_case("depthwise5x5 1152 7x7", {1, 1152, 7, 7}, {1152, 1, 5, 5}, 1, 2, 1152, true),
      // Grouped: ResNeXt-50 32x4d's 3x3 convs (32 groups of 4, 8, 16, 32 channels) and RegNet-Y-400MF's
      // (groups of 8 channels).
      conv_case("grouped3x3 g32 128 56x56 +relu", {1, 128, 56, 56}, {128, 4, 3, 3}, 1, 1, 32, true),
      conv_case("grouped3x3 g32 256 28x28 +relu", {1, 256, 28, 28}, {256, 8, 3, 3}, 1, 1, 32, true),
      conv_case("grouped3x3 g32 512 14x14 +relu", {1, 512, 14, 14}, {512, 16, 3, 3}, 1, 1, 32, true),
      conv_case("grouped3x3 g32 1024 7x7 +relu", {1, 1024, 7, 7}, {1024, 32, 3, 3}, 1, 1, 32, true),
      conv_case("grouped3x3 s2 g32 256 56x56 +relu", {1, 256, 56, 56}, {256, 8, 3, 3}, 2, 1, 32, true),
      conv_case("grouped3x3 s2 g32 1024 14x14 +relu", {1, 1024, 14, 14}, {1024, 32, 3, 3}, 2, 1, 32, true),
      conv_case("grouped3x3 g26 208 14x14 +relu", {1, 208, 14, 14}, {208, 8, 3, 3}, 1, 1, 26, true),
      conv_case("grouped3x3 g55 440 7x7 +relu", {1, 440, 7, 7}, {440, 8, 3, 3}, 1, 1, 55, true),
      // RegNetX-400MF's (groups of 16 channels: one AVX-512 vector) and its 400-channel 1x1 convs.
      conv_case("grouped3x3 g25 400 7x7 +relu", {1, 400, 7, 7}, {400, 16, 3, 3}, 1, 1, 25, true),
      conv_case("grouped3x3 g10 160 14x14 +relu", {1, 160, 14, 14}, {160, 16, 3, 3}, 1, 1, 10, true),
      conv_case("grouped3x3 s2 g2 32 112x112 +relu", {1, 32, 112, 112}, {32, 16, 3, 3}, 2, 1, 2, true),
      conv_case("conv1x1 400->400 7x7 +relu", {1, 400, 7, 7}, {400, 400, 1, 1}, 1, 0, 1, true),
      dense_case("dense 128x768x3072", 128, 768, 3072),
      dense_case("dense 1x192x768 (LSTM 192 step)", 1, 192, 768),
      dense_case("dense 1x512x2048 (LSTM 512 step)", 1, 512, 2048),
      dense_case("dense 1x1280x1000 (classifier)", 1, 1280, 1000),
      dense_case("dense 1x2048x1000 (classifier)", 1, 2048, 1000),
      dense_case("dense 128x3072x768", 128, 3072, 768),
      matmul_case("matmul 128x768 . const 768x3072", {1, 128, 768}, {768, 3072}, true),
      matmul_case("batch matmul 12x128x64x128", {1, 12, 128, 64}, {1, 12, 64, 128}, false),
      matmul_case("batch matmul 12x128x128x64", {1, 12, 128, 128}, {1, 12, 128, 64}, false),
      // ViT-B/16's attention: 197 tokens (a prime: every tile has a tail).
      matmul_case("batch matmul 12x197x64x197", {12, 197, 64}, {12, 64, 197}, false),
      matmul_case("batch matmul 12x197x197x64", {12, 197, 197}, {12, 197, 64}, false),
      unary_case("layer_norm 128x768", ops::OpCode::LayerNorm, std::make_shared<const ops::LayerNormAttrs>([] {
        ops::LayerNormAttrs a;
        a.axis = 2;
        return a;
      }()), {1, 128, 768}, 2, 8.0 * 128 * 768),
      unary_case("softmax 12x128x128", ops::OpCode::Softmax, std::make_shared<const ops::AxisAttrs>([] {
        ops::AxisAttrs a;
        a.axis = 3;
        return a;
      }()), {1, 12, 128, 128}, 0, 5.0 * 12 * 128 * 128),
      // Pools (GoogLeNet's branch pools are 3x3 stride 1 on small planes; the stems', stride 2);
      // a "FLOP" is one window tap.
      pool_case("max_pool 3x3 s1 512 14x14", ops::OpCode::MaxPool2d, {1, 512, 14, 14}, 3, 1, 1),
      pool_case("max_pool 3x3 s1 832 7x7", ops::OpCode::MaxPool2d, {1, 832, 7, 7}, 3, 1, 1),
      pool_case("max_pool 3x3 s1 256 28x28", ops::OpCode::MaxPool2d, {1, 256, 28, 28}, 3, 1, 1),
      pool_case("max_pool 3x3 s1 192 56x56", ops::OpCode::MaxPool2d, {1, 192, 56, 56}, 3, 1, 1),
      pool_case("max_pool 3x3 s2 64 112x112", ops::OpCode::MaxPool2d, {1, 64, 112, 112}, 3, 2, 1),
      pool_case("max_pool 3x3 s2 128 55x55", ops::OpCode::MaxPool2d, {1, 128, 55, 55}, 3, 2, 0),
      pool_case("max_pool 3x3 s2 480 28x28", ops::OpCode::MaxPool2d, {1, 480, 28, 28}, 3, 2, 0),
      pool_case("avg_pool 2x2 s2 256 56x56", ops::OpCode::AvgPool2d, {1, 256, 56, 56}, 2, 2, 0),
      pool_case("avg_pool 2x2 s2 512 28x28", ops::OpCode::AvgPool2d, {1, 512, 28, 28}, 2, 2, 0),
      pool_case("avg_pool 3x3 s1 288 35x35", ops::OpCode::AvgPool2d, {1, 288, 35, 35}, 3, 1, 1),
      // DeepLabV3's and LR-ASPP's logits back to the image (21 classes), and a 2x decoder step.
      resize_case("resize linear 21 14x14 -> 224x224", "linear", {1, 21, 14, 14}, 224, 224),
      resize_case("resize linear 21 28x28 -> 224x224", "linear", {1, 21, 28, 28}, 224, 224),
      resize_case("resize linear 256 28x28 -> 56x56", "linear", {1, 256, 28, 28}, 56, 56),
      resize_case("resize cubic 64 56x56 -> 112x112", "cubic", {1, 64, 56, 56}, 112, 112),
  };
  for (const Case& c : cases) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    run_case(c, repeats, true, tgt);
  }
  return 0;
}
