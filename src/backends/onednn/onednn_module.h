// The oneDNN runtime module: one Plan per external function and thread count (oneDNN chooses its
// kernels and work split for the thread count current when a primitive is created, so a module
// run under another omp_set_num_threads value builds, once, a plan for that count).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "backends/onednn/onednn_plan.h"

namespace sy::backends::onednn {

// Written by save(); load() rejects any other version.
inline constexpr int kModuleFormatVersion = 1;
inline constexpr const char* kModuleMagic = "switchyard-onednn-module";

class OnednnModule : public RuntimeModule {
 public:
  // Validates the functions and builds their plans for the current thread count.
  explicit OnednnModule(const std::vector<ExternFunction>& fns);
  // Rebuilds from save() bytes and the same functions; throws sy::Error on a version or symbol
  // mismatch.
  static std::unique_ptr<OnednnModule> load(const std::string& bytes, const std::vector<ExternFunction>& fns);

  std::vector<Tensor> run(const std::string& symbol, const std::vector<Tensor>& inputs) override;
  std::string save() const override;
  // The arenas of the plans of every function for the current thread count (built if needed).
  int64_t activation_bytes() override;

  // The plan used for `symbol` at the current thread count (built if needed).
  const PlanStats& stats(const std::string& symbol);

 private:
  // A plan holds its activations and its stream, so one run at a time uses it: concurrent runs
  // (several threads running one loaded model) each take a free plan of the symbol and thread
  // count, or build another (the weights, reordered once, are shared by all).
  struct Slot {
    std::unique_ptr<Plan> plan;
    bool busy = false;
  };
  Slot& acquire(const std::string& symbol);
  std::map<std::string, ir::Expr> fns_;
  std::map<std::pair<std::string, int>, std::vector<std::unique_ptr<Slot>>> plans_;
  std::shared_ptr<WeightStore> weights_ = make_weight_store();
  std::mutex mu_;
};

}  // namespace sy::backends::onednn
