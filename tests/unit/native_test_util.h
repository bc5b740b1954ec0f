// Helpers for the native-path tests: build kernels into a per-user test cache and run them on tensors.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "codegen/c/build.h"
#include "support/tensor.h"
#include "te/lower.h"
#include "tir/printer.h"

namespace sy::nativetest {

inline std::string test_cache_dir() {
  return (std::filesystem::temp_directory_path() / ("switchyard-test-cache-" + std::to_string(getuid()))).string();
}

inline codegen::BuildOptions build_options() {
  codegen::BuildOptions o;
  o.compile.cache_dir = test_cache_dir();
  return o;
}

inline std::shared_ptr<codegen::Module> build_one(const tir::PrimFunc& f, codegen::BuildOptions o = build_options()) {
  return codegen::build({f}, o);
}

inline void run(const codegen::Module& m, const std::string& name, std::vector<Tensor*> ts) {
  std::vector<void*> args;
  for (auto* t : ts) args.push_back(t->raw());
  m.call(name, args);
}

inline Tensor random_tensor(Shape s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Tensor t(DType::f32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

inline void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 10; ++i) {
    const double g = got.get_as_double(i), w = want.get_as_double(i);
    if (!(std::abs(g - w) <= tol * std::max(1.0, std::abs(w)))) {
      ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w;
      ++bad;
    }
  }
}

}  // namespace sy::nativetest
