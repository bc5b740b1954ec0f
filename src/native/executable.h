// A natively compiled model ready to run: its plan, the kernels' shared library (dlopen'ed), a
// preallocated arena for intermediates, and the external (BYOC) modules it calls.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/c/module.h"
#include "ir/module.h"
#include "native/plan.h"
#include "support/error.h"
#include "target/target.h"

namespace sy::native {

// Runs an external function by symbol (a BYOC runtime module).
using ExternalRunner = std::function<std::vector<Tensor>(const std::string& symbol, const std::vector<Tensor>& args)>;

// Wall time of each call of the plan (index = Plan::calls), summed over the runs that filled it.
struct CallTimes {
  std::vector<double> seconds;
  int runs = 0;
};

// A stateful extern's init refused a call site (executable.cpp): which kernel, and why.
struct ExternInitError : Error {
  ExternInitError(std::string kernel_name, const std::string& why)
      : Error("kernel " + kernel_name + ": " + why), kernel(std::move(kernel_name)) {}
  std::string kernel;
};

class Executable {
 public:
  // The library must hold every generated kernel of the plan (sy::Error naming a missing one);
  // it may be null when every kernel falls back to the reference kernels. `target` is what the
  // kernels were built for: an executable for a CPU with features this one lacks can be made
  // (cross-compilation) and saved, but run() refuses it.
  Executable(Plan plan, std::shared_ptr<codegen::Module> library, target::Target target);

  // Runs on inputs (checked against the plan's input types, errors name the input);
  // one tensor per result of @main. Safe to call from several threads at once: each run takes an
  // activation arena of its own from a pool (kernels keep no state; a backend module that does
  // must serialize its own runs).
  // With `times`, each call is timed (adds a clock read per call) and added to it.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, int threads, const ExternalRunner& external,
                          CallTimes* times = nullptr) const;

  const Plan& plan() const { return plan_; }
  const target::Target& target() const { return target_; }
  // The library's bytes ("" when there is no generated kernel).
  std::string library_bytes() const;
  const codegen::Module* library() const { return library_.get(); }
  // What call ci's kernel takes after its buffers: the states of its stateful extern sites (a
  // caller that calls a kernel itself must append them).
  const std::vector<void*>& extern_states(size_t ci) const;

 private:
  template <typename Resolve>
  void run_fallback(size_t call, const Resolve& resolve) const;
  void check_external_results(const Call& c, const std::vector<Tensor>& got) const;

  Plan plan_;
  std::shared_ptr<codegen::Module> library_;
  target::Target target_;
  std::string cannot_run_;  // why this CPU cannot run the kernels ("" when it can)
  std::vector<codegen::PackedKernel> kernels_;  // per call (null for external and fallback calls)
  std::vector<ir::Module> fallback_;            // per unique kernel: a module for the reference executor
  // Per call: the states of its kernel's stateful extern sites (extern_abi.h), made once here and
  // appended to the kernel's buffers on every run.
  struct ExternStates;
  std::shared_ptr<ExternStates> states_;
  void make_extern_states();
  // Activation arenas not in use by a run. Zeroed, 64-byte aligned, long-lived: a large arena is
  // a fresh mapping, so its pages cost nothing until a run touches them. One is made up front; a
  // run that finds none free (another thread is running) makes another, kept for later runs.
  struct ArenaPool {
    std::mutex mu;
    std::vector<std::shared_ptr<uint8_t[]>> free;
  };
  std::shared_ptr<uint8_t[]> take_arena() const;
  void give_back(std::shared_ptr<uint8_t[]> arena) const;
  std::shared_ptr<ArenaPool> arenas_ = std::make_shared<ArenaPool>();
};

}  // namespace sy::native
