// Candidate measurement in child processes: the reference once per task, then each candidate
// built, checked and timed in a child of its own, reporting through shared memory.
#include "tune/measure.h"

#include <fcntl.h>
#include <omp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "backends/reference/executor.h"
#include "ir/type.h"
#include "native/compile.h"
#include "support/error.h"
#include "target/host.h"
#include "tune/cache_state.h"

namespace sy::tune {

namespace {

// Anonymous memory shared with the children forked after it is made.
class Shared {
 public:
  explicit Shared(size_t n) : n_(std::max<size_t>(n, 1)) {
    p_ = mmap(nullptr, n_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p_ == MAP_FAILED) throw Error("tune: cannot map " + std::to_string(n_) + " bytes of shared memory");
  }
  ~Shared() { munmap(p_, n_); }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_;
  size_t n_;
};

// Clang's OpenMP runtime (libomp) registers each process that starts it in
// /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid> and removes the file at exit, which _exit skips: a
// later process given the same pid then refuses to start ("OMP: Error #15 ... already
// initialized"; 46 files were left by each `tune` of the CLI tests under ASan). GCC's libgomp keeps
// no such file.
void forget_openmp_registration() {
  char name[64];
  std::snprintf(name, sizeof name, "/dev/shm/__KMP_REGISTERED_LIB_%d_%d", static_cast<int>(getpid()),
                static_cast<int>(getuid()));
  unlink(name);
}

struct ChildEnd {
  bool timed_out = false;
  int signal = 0;     // the signal that ended it, 0 if it exited
  int exit_code = 0;
};

// Runs body in a child (stdout and stderr to /dev/null: a candidate's noise must not garble the
// progress display) and waits for it at most timeout_s; a child still running then is killed.
template <typename Body>
ChildEnd run_child(const Body& body, double timeout_s) {
  int fds[2];
  // Close-on-exec: the C compiler the child runs must not hold the write end (its end is the
  // child's end).
  if (pipe2(fds, O_CLOEXEC) != 0) throw Error("tune: cannot create a pipe");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error("tune: cannot fork a measurement process");
  }
  if (pid == 0) {
    close(fds[0]);
    // A group of its own, so that a kill takes the C compiler it may be running along; and no
    // life beyond the tuner's.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(4);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    int code = 0;
    try {
      body();
    } catch (...) {
      code = 3;
    }
    forget_openmp_registration();
    _exit(code);
  }
  close(fds[1]);
  // The pipe's write end closes when the child ends, however it ends.
  pollfd pf{fds[0], POLLIN, 0};
  const int ms = static_cast<int>(std::min(timeout_s * 1000.0, 2.0e9));
  int r;
  do r = poll(&pf, 1, ms);
  while (r < 0 && errno == EINTR);
  close(fds[0]);
  ChildEnd end;
  if (r <= 0) {  // timed out (or poll failed): never wait on it unbounded
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    end.timed_out = true;
  } else {
    kill(-pid, SIGKILL);  // what the child left running in its group (it has ended)
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  return end;
}

// What a child reports.
struct Report {
  int done;  // 1 when filled in
  int outcome;
  double median_ms, max_error;
  int ncosts;
  double costs_ms[256];
  char message[512];
};

void set_message(Report* r, const std::string& m) {
  std::snprintf(r->message, sizeof r->message, "%s", m.substr(0, m.find('\n')).c_str());
}

Tensor random_input(DType t, const Shape& s, std::mt19937& rng) {
  Tensor x(t, s);
  if (!is_float(t)) return x;  // integer inputs of tuned kernels are rare; zeros are in range
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  dispatch_dtype(t, [&]<typename T>(T) {
    T* p = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<T>(d(rng));
  });
  return x;
}

std::vector<ir::Type> result_types(const ir::Module& m) {
  const ir::Type& t = m.main().ret_type();
  return ir::is_tensor(t) ? std::vector<ir::Type>{t} : t->fields;
}

// Largest violation of the tolerance, in units of the allowed error (> 1: wrong), and where.
// A mismatch that no tolerance covers (NaN against a number, an infinity against another value,
// integers that differ): larger than any scaled error, finite so that records can hold it.
constexpr double kMismatch = 1e30;

double compare(const Tensor& got, const Tensor& want, int64_t* where) {
  double worst = 0;
  double scale = 1;  // over the finite values: one infinity must not switch the check off
  for (int64_t i = 0; i < want.numel(); ++i)
    if (double w = std::fabs(want.get_as_double(i)); std::isfinite(w)) scale = std::max(scale, w);
  const bool f64 = want.dtype() == DType::f64, fl = is_float(want.dtype());
  const double rtol = f64 ? 1e-9 : 1e-3, atol = rtol * 0.1 * scale;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_as_double(i), w = want.get_as_double(i);
    double v;
    if (std::isnan(w) || std::isnan(g)) v = std::isnan(w) && std::isnan(g) ? 0 : kMismatch;
    else if (!fl || std::isinf(w) || std::isinf(g)) v = g == w ? 0 : kMismatch;
    else v = std::min(kMismatch, std::fabs(g - w) / (atol + rtol * std::fabs(w)));
    if (!(v <= worst)) {
      worst = v;
      *where = i;
    }
  }
  return worst;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

TaskBench::TaskBench(const Task& task, const target::Target& t, const MeasureOptions& opts)
    : task_(task), target_(t), opts_(opts) {
  if (opts_.threads <= 0) opts_.threads = std::max(1, t.cores);
  std::mt19937 rng(opts_.seed);
  for (const ir::Expr& p : task.module.main().params) {
    const ir::TypeNode& tt = ir::as_tensor(p->type);
    inputs_.push_back(random_input(tt.dtype, tt.shape, rng));
  }
  size_t bytes = 0;
  for (const ir::Type& rt : result_types(task.module)) {
    want_.emplace_back(ir::as_tensor(rt).dtype, ir::as_tensor(rt).shape);
    bytes += want_.back().nbytes();
  }
  Shared out(bytes + sizeof(Report));
  Report* rep = out.as<Report>();
  char* data = out.as<char>() + sizeof(Report);
  const int threads = opts_.threads;
  ChildEnd end = run_child([&] {
    omp_set_num_threads(threads);
    reference::ExecOptions eo;
    eo.threads = threads;
    Result<std::vector<Tensor>> r = reference::run_module(task_.module, inputs_, eo);
    if (!r) {
      set_message(rep, r.status().message());
      return;
    }
    size_t off = 0;
    for (const Tensor& o : r.value()) {
      std::memcpy(data + off, o.raw(), o.nbytes());
      off += o.nbytes();
    }
    rep->done = 1;
  }, opts_.reference_timeout_s);
  if (!rep->done)
    throw Error("the reference executor failed on " + task.description + ": " +
                (rep->message[0] ? rep->message : end.timed_out ? "timed out" : "it crashed"));
  size_t off = 0;
  for (Tensor& w : want_) {
    std::memcpy(w.raw(), data + off, w.nbytes());
    off += w.nbytes();
  }
}

TaskBench::~TaskBench() = default;

namespace {

// A candidate built in a measurement child: its executable and the kernel's argument pointers.
struct Built {
  native::Compiled nc;
  std::vector<Tensor> outs;
  std::vector<void*> args;
  codegen::PackedKernel kernel = nullptr;
  // The call's computed inputs, constant inputs and outputs; whether it has extern states.
  std::vector<std::pair<void*, size_t>> activations, weights, results;
  bool has_state = false;
};

// The caches as the model leaves them for the candidate (tune/cache_state.h). Its constants
// are flushed; an extern keeps its weights in its state, out of sight, so with states the
// last-level cache is swept as well.
CacheState cache_state(const Built& b, const target::Target& t) {
  return CacheState(b.activations, b.weights, b.results,
                    b.has_state ? 2 * static_cast<size_t>(std::max<int64_t>(t.l3_bytes, 1 << 20)) : 0);
}

// The task's module with its call's function given the KeptLayout attribute `kept`: its
// parameters and result taken as in that layout (random inputs either way; see Choice::kept_layout).
ir::Module with_kept_layout(const ir::Module& m, const std::string& kept) {
  const ir::FunctionNode& main = m.main();
  const auto* call = main.body->as<ir::CallNode>();
  const auto* fn = call ? call->callee->as<ir::FunctionNode>() : nullptr;
  if (!fn) throw Error("tune: a task's main is not one call of a function");
  ir::FuncAttrs attrs = fn->attrs;
  attrs[topi::kKeptLayoutAttr] = kept;
  ir::Module out = m;
  out.functions["main"] = ir::function(main.params, ir::call_function(ir::function(fn->params, fn->body, attrs), call->args), main.attrs);
  return out;
}

// Builds the candidate (in the child); on failure says why and returns false.
bool build_candidate(const Task& task, const target::Target& t, const strategy::Choice& candidate,
                     const std::vector<Tensor>& inputs, Built& b, std::string& why) {
  native::CompileOptions co;
  co.target = t;
  co.chooser = [&](const ir::FunctionNode&, const ir::CallNode&, const target::Target&) {
    std::optional<strategy::Choice> c = candidate;
    c->from_record = true;
    return c;
  };
  try {
    b.nc = native::compile_native(candidate.kept_layout.empty() ? task.module : with_kept_layout(task.module, candidate.kept_layout), co);
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
  if (!b.nc.fallbacks.empty()) {
    why = b.nc.fallbacks[0].second;
    return false;
  }
  const native::Plan& p = b.nc.executable->plan();
  const native::Call* call = nullptr;
  size_t call_index = 0;
  for (size_t ci = 0; ci < p.calls.size(); ++ci)
    if (!p.calls[ci].external && !p.calls[ci].fallback) {
      call = &p.calls[ci];
      call_index = ci;
    }
  if (!call || b.nc.choices.at(static_cast<size_t>(call->function)).implementation != candidate.implementation ||
      !b.nc.choices[static_cast<size_t>(call->function)].from_record) {
    why = call ? b.nc.choices[static_cast<size_t>(call->function)].why : "no kernel was built";
    return false;
  }
  for (int v : p.outputs) b.outs.emplace_back(p.values[static_cast<size_t>(v)].dtype, p.values[static_cast<size_t>(v)].shape);
  auto ptr = [&](int v) -> void* {
    const native::Value& val = p.values[static_cast<size_t>(v)];
    switch (val.kind) {
      case native::ValueKind::Input: return const_cast<void*>(inputs.at(static_cast<size_t>(val.index)).raw());
      case native::ValueKind::Constant: return const_cast<void*>(p.constants.at(static_cast<size_t>(val.index)).raw());
      case native::ValueKind::Output: return b.outs.at(static_cast<size_t>(val.index)).raw();
      default: throw Error("tune: a one-kernel module with an intermediate value");
    }
  };
  for (int v : call->inputs) {
    b.args.push_back(ptr(v));
    const native::Value& val = p.values[static_cast<size_t>(v)];
    if (val.kind == native::ValueKind::Input)
      b.activations.emplace_back(b.args.back(), inputs.at(static_cast<size_t>(val.index)).nbytes());
    else if (val.kind == native::ValueKind::Constant)
      b.weights.emplace_back(b.args.back(), p.constants.at(static_cast<size_t>(val.index)).nbytes());
  }
  for (int v : call->outputs) {
    b.args.push_back(ptr(v));
    b.results.emplace_back(b.args.back(), b.outs.at(static_cast<size_t>(p.values[static_cast<size_t>(v)].index)).nbytes());
  }
  const std::vector<void*>& states = b.nc.executable->extern_states(call_index);
  b.args.insert(b.args.end(), states.begin(), states.end());
  b.has_state = !states.empty();
  b.kernel = b.nc.executable->library()->get(call->kernel);
  return true;
}

double run_once(const Built& b, const CacheState* cache = nullptr) {
  if (cache) cache->prime();
  auto t0 = std::chrono::steady_clock::now();
  b.kernel(b.args.data());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Measurement TaskBench::measure(const strategy::Choice& candidate, double best_ms) const {
  Shared shared(sizeof(Report));
  Report* rep = shared.as<Report>();
  const MeasureOptions& o = opts_;
  ChildEnd end = run_child([&] {
    rep->outcome = static_cast<int>(Outcome::BuildFailed);
    omp_set_num_threads(o.threads);
    Built built;
    std::string why;
    if (!build_candidate(task_, target_, candidate, inputs_, built, why)) {
      set_message(rep, why);
      rep->done = 1;
      return;
    }
    std::vector<Tensor>& outs = built.outs;
    using clock = std::chrono::steady_clock;
    // Checked twice, each time into outputs filled with 0xFF bytes (NaN, or -1): the executable
    // hands a kernel reused memory, so an element it fails to write must not pass for a zero.
    double worst = 0;
    auto check = [&] {
      for (Tensor& t : outs) std::memset(t.raw(), 0xFF, t.nbytes());
      run_once(built);
      for (size_t i = 0; i < outs.size(); ++i) {
        int64_t where = 0;
        double v = compare(outs[i], want_.at(i), &where);
        if (v > worst) {
          worst = v;
          if (v > 1)
            set_message(rep, "output " + std::to_string(i) + " element " + std::to_string(where) + ": got " +
                                 std::to_string(outs[i].get_as_double(where)) + ", reference " +
                                 std::to_string(want_[i].get_as_double(where)));
        }
      }
    };
    check();
    if (worst <= 1) check();
    rep->max_error = worst;
    if (worst > 1) {
      rep->outcome = static_cast<int>(Outcome::Wrong);
      rep->done = 1;
      return;
    }
    const CacheState cache = cache_state(built, target_);
    run_once(built, &cache);  // warm-up
    std::vector<double> t;
    for (int i = 0; i < 3; ++i) t.push_back(run_once(built, &cache));
    if (best_ms > 0 && median(t) > 2 * best_ms) {
      rep->outcome = static_cast<int>(Outcome::Cut);
    } else {
      rep->outcome = static_cast<int>(Outcome::Ok);
      auto t0 = clock::now();
      while (static_cast<int>(t.size()) < o.max_runs &&
             (static_cast<int>(t.size()) < o.min_runs ||
              std::chrono::duration<double>(clock::now() - t0).count() < o.min_seconds))
        t.push_back(run_once(built, &cache));
    }
    rep->median_ms = median(t);
    rep->ncosts = static_cast<int>(std::min<size_t>(t.size(), 256));
    std::copy(t.begin(), t.begin() + rep->ncosts, rep->costs_ms);
    rep->done = 1;
  }, o.timeout_s);
  Measurement m;
  if (end.timed_out) {
    m.outcome = Outcome::TimedOut;
    m.message = "no result after " + std::to_string(static_cast<int>(o.timeout_s)) + " s; killed";
    return m;
  }
  if (!rep->done) {
    m.outcome = Outcome::Crashed;
    m.message = end.signal ? std::string("killed by signal ") + std::to_string(end.signal) + " (" + strsignal(end.signal) + ")"
                           : "exited with status " + std::to_string(end.exit_code) + " before reporting";
    return m;
  }
  m.outcome = static_cast<Outcome>(rep->outcome);
  m.median_ms = rep->median_ms;
  m.costs_ms.assign(rep->costs_ms, rep->costs_ms + rep->ncosts);
  m.message = rep->message;
  m.max_error = rep->max_error;
  return m;
}

std::vector<Measurement> TaskBench::confirm(const std::vector<strategy::Choice>& candidates) const {
  const size_t n = candidates.size();
  if (n == 0) return {};
  Shared shared(sizeof(Report) * n);
  Report* reps = shared.as<Report>();
  const MeasureOptions& o = opts_;
  ChildEnd end = run_child([&] {
    omp_set_num_threads(o.threads);
    std::vector<Built> built(n);
    std::string why;
    for (size_t i = 0; i < n; ++i)
      if (!build_candidate(task_, target_, candidates[i], inputs_, built[i], why)) return;
    std::vector<CacheState> cache;
    for (const Built& b : built) cache.push_back(cache_state(b, target_));
    for (int w = 0; w < 2; ++w)
      for (size_t i = 0; i < n; ++i) run_once(built[i], &cache[i]);
    std::vector<std::vector<double>> t(n);
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < o.max_runs; ++r) {
      for (size_t i = 0; i < n; ++i) t[i].push_back(run_once(built[i], &cache[i]));
      if (r + 1 >= o.min_runs &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= o.min_seconds * static_cast<double>(n))
        break;
    }
    for (size_t i = 0; i < n; ++i) {
      reps[i].outcome = static_cast<int>(Outcome::Ok);
      reps[i].median_ms = median(t[i]);
      reps[i].ncosts = static_cast<int>(std::min<size_t>(t[i].size(), 256));
      std::copy(t[i].begin(), t[i].begin() + reps[i].ncosts, reps[i].costs_ms);
      reps[i].done = 1;
    }
  }, o.timeout_s * static_cast<double>(n));
  std::vector<Measurement> out;
  if (end.timed_out || end.signal) return out;
  for (size_t i = 0; i < n; ++i) {
    if (!reps[i].done) return {};
    Measurement m;
    m.median_ms = reps[i].median_ms;
    m.costs_ms.assign(reps[i].costs_ms, reps[i].costs_ms + reps[i].ncosts);
    out.push_back(m);
  }
  return out;
}

std::vector<double> time_models(const ir::Module& m, const std::vector<native::CompileOptions>& options,
                                const MeasureOptions& opts) {
  const size_t n = options.size();
  if (n == 0) return {};
  Shared shared(sizeof(Report) * n);
  Report* reps = shared.as<Report>();
  ChildEnd end = run_child([&] {
    const target::Target tgt = options[0].target ? *options[0].target : target::host();
    const int threads = opts.threads > 0 ? opts.threads : std::max(1, tgt.cores);
    omp_set_num_threads(threads);  // this process keeps to one thread; the model runs on the target's
    std::vector<native::Compiled> built;
    for (const native::CompileOptions& o : options) built.push_back(native::compile_native(m, o));
    const native::Plan& plan = built[0].executable->plan();
    std::vector<Tensor> inputs;
    std::mt19937 rng(opts.seed);
    for (int v : plan.inputs) {
      const native::Value& val = plan.values[static_cast<size_t>(v)];
      inputs.push_back(random_input(val.dtype, val.shape, rng));
    }
    for (int w = 0; w < 3; ++w)
      for (native::Compiled& c : built) c.executable->run(inputs, threads, nullptr);
    std::vector<std::vector<double>> t(n);
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < opts.max_runs; ++r) {
      for (size_t i = 0; i < n; ++i) {
        auto a = std::chrono::steady_clock::now();
        built[i].executable->run(inputs, threads, nullptr);
        t[i].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
      }
      if (r + 1 >= opts.min_runs &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= opts.min_seconds * static_cast<double>(n))
        break;
    }
    for (size_t i = 0; i < n; ++i) {
      reps[i].median_ms = median(t[i]);
      reps[i].done = 1;
    }
  }, opts.timeout_s * static_cast<double>(n) * 4);
  if (end.timed_out || end.signal) return {};
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) {
    if (!reps[i].done) return {};
    out.push_back(reps[i].median_ms);
  }
  return out;
}

}  // namespace sy::tune
