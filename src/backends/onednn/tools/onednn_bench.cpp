// Timing tool for the oneDNN backend (not a test): loads a model, rewrites @main's body with the
// backend's composite rules, wraps the whole body as ONE external function, compiles it, checks
// the outputs against reference .npy files and prints latencies at the requested thread counts.
//
//   sy_onednn_bench MODEL_DIR [--threads 1,2] [--repeat 30] [--stats]
//   (MODEL_DIR holds model.onnx, input.npy and reference/<output>.npy, as tests/models exports)
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "api/latency.h"
#include "api/load.h"
#include "backends/backend.h"
#include "backends/onednn/onednn_module.h"
#include "ir/visitor.h"
#include "pattern/pattern.h"
#include "support/npy.h"

using namespace sy;

namespace {

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::stoi(item));
  return v;
}

double rel_err(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    num = std::max(num, std::abs(a.get_as_double(i) - b.get_as_double(i)));
    den = std::max(den, std::abs(b.get_as_double(i)));
  }
  return den > 0 ? num / den : num;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL_DIR [--threads 1,2] [--repeat 30] [--stats]\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  std::vector<int> threads{1, 2};
  int repeat = 30;
  bool show_stats = false;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = parse_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--stats")) show_stats = true;
  }
  try {
    ir::Module m = api::load_model(dir + "/model.onnx");
    const ir::FunctionNode& main_fn = m.main();
    const backends::Backend& be = backends::BackendRegistry::global().get("onednn");
    ir::Expr body = main_fn.body;
    for (const backends::CompositeRule& r : be.composite_rules())
      body = pattern::rewrite_composites(body, r.pattern, r.name, r.check);
    int composites = 0, plain = 0;
    for (const ir::Expr& e : ir::post_order(body)) {
      auto* c = e->as<ir::CallNode>();
      if (!c) continue;
      if (c->is_op()) {
        ++plain;
        backends::Verdict v = be.supports_op(*c);
        if (!v.ok) std::fprintf(stderr, "note: not supported: %s\n", v.reason.c_str());
      } else {
        ++composites;
      }
    }
    ir::Expr fn = ir::function(main_fn.params, body, {{"Compiler", "onednn"}, {"global_symbol", "onednn_0"}});
    std::printf("%s: %d composites, %d plain ops in one region\n", dir.c_str(), composites, plain);

    Tensor input = npy::read_file(dir + "/input.npy");
    std::vector<Tensor> refs;
    for (size_t i = 0; i < m.output_names.size(); ++i)
      refs.push_back(npy::read_file(dir + "/reference/" + m.output_names[i] + ".npy"));

    auto t0 = std::chrono::steady_clock::now();
    omp_set_num_threads(threads.front());
    auto mod = std::make_unique<backends::onednn::OnednnModule>(
        std::vector<backends::ExternFunction>{{"onednn_0", fn}});
    auto t1 = std::chrono::steady_clock::now();
    std::printf("compile: %.1f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
    for (int nt : threads) {
      omp_set_num_threads(nt);
      std::vector<Tensor> out = mod->run("onednn_0", {input});  // warm-up (and plan for nt threads)
      std::vector<Tensor> again = mod->run("onednn_0", {input});
      bool same = out.size() == again.size();
      for (size_t i = 0; same && i < out.size(); ++i) same = out[i].bitwise_equal(again[i]);
      std::vector<double> ms;
      for (int r = 0; r < repeat; ++r) {
        auto a = std::chrono::steady_clock::now();
        mod->run("onednn_0", {input});
        auto b = std::chrono::steady_clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
      }
      api::LatencyStats st = api::latency_stats(ms);
      std::printf("threads=%d  median %.2f ms  min %.2f  p90 %.2f  deterministic=%s", nt, st.median, st.min, st.p90,
                  same ? "yes" : "NO");
      for (size_t i = 0; i < refs.size() && i < out.size(); ++i) std::printf("  rel_err[%zu]=%.3g", i, rel_err(out[i], refs[i]));
      std::printf("\n");
      if (show_stats) {
        const auto& s = mod->stats("onednn_0");
        std::printf("  primitives %d, reorders %d, fused post-ops %d, arena %.1f MB, weights %.1f MB\n", s.primitives,
                    s.reorders, s.fused_post_ops, s.arena_bytes / 1e6, s.weight_bytes / 1e6);
        std::map<std::string, int> kinds;
        for (const std::string& k : s.kernels) kinds[k]++;
        for (auto& [k, n] : kinds) std::printf("    %4d  %s\n", n, k.c_str());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
