// Tuned against untuned in one process (not a test): the model compiled twice, natively with the
// strategy's defaults and with tuning records, the two executables run alternately so that the
// slow and fast phases of a noisy machine fall on both alike; medians and their ratio.
// Usage: sy_records_ab MODEL RECORDS [threads=2] [rounds=60]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "api/load.h"
#include "native/compile.h"
#include "support/error.h"
#include "target/host.h"
#include "tune/records.h"

using namespace sy;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL RECORDS [threads=2] [rounds=60]\n", argv[0]);
    return 2;
  }
  try {
    const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
    const int rounds = argc > 4 ? std::atoi(argv[4]) : 60;
    if (threads < 1 || rounds < 1) throw Error("threads and rounds must be at least 1");
    if (std::getenv("SWITCHYARD_CHOICES")) throw Error("unset SWITCHYARD_CHOICES: the untuned build must use the defaults");
    ir::Module m = api::load_model(argv[1]);
    const target::Target& t = target::host();
    native::Compiled plain = native::compile_native(m);
    tune::SelectedRecords rs = tune::select_records(tune::read_records(argv[2]), t, tune::current_validators());
    tune::check_records(rs, argv[2], t);
    native::CompileOptions o;
    o.chooser = tune::records_chooser(rs);
    native::Compiled tuned = native::compile_native(m, o);
    int from_records = 0;
    for (const auto& c : tuned.choices) from_records += c.from_record;
    std::vector<Tensor> inputs;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (const ir::Expr& p : m.main().params) {
      const ir::TypeNode& tt = ir::as_tensor(p->type);
      Tensor x(tt.dtype, tt.shape);
      if (tt.dtype == DType::f32)
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = d(rng);
      inputs.push_back(x);
    }
    auto time_one = [&](const native::Compiled& c) {
      auto t0 = std::chrono::steady_clock::now();
      c.executable->run(inputs, threads, nullptr);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    for (int i = 0; i < 5; ++i) time_one(plain), time_one(tuned);
    std::vector<double> a, b;
    for (int i = 0; i < rounds; ++i) {
      a.push_back(time_one(plain));
      b.push_back(time_one(tuned));
    }
    const double ma = median(a), mb = median(b);
    std::printf("%s: %d threads, %d alternating runs each; untuned %.2f ms, tuned %.2f ms (%d kernels from "
                "records): tuned is %.3fx faster\n",
                argv[1], threads, rounds, ma, mb, from_records, ma / mb);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sy_records_ab: %s\n", e.what());
    return 1;
  }
  return 0;
}
