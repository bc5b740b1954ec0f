// Running a planned model: one pointer per value, kernels called in order.
#include "native/executable.h"

#include <omp.h>

#include <cstring>

#include "backends/reference/executor.h"
#include "codegen/c/c_generator.h"
#include "ir/type.h"
#include "strategy/externs.h"
#include "support/error.h"
#include "support/tensor_storage.h"
#include "target/host.h"

namespace sy::native {

namespace {

// Whether t is a tensor of v's shape and dtype; the type strings for messages.
bool has_type_of(const Tensor& t, const Value& v) { return t.defined() && t.dtype() == v.dtype && t.shape() == v.shape; }
std::string type_of(const Value& v) { return ir::type_str(ir::tensor_type(v.shape, v.dtype)); }
std::string type_of(const Tensor& t) { return ir::type_str(ir::tensor_type(t.shape(), t.dtype())); }

}  // namespace

Executable::Executable(Plan plan, std::shared_ptr<codegen::Module> library, target::Target target)
    : plan_(std::move(plan)), library_(std::move(library)), target_(std::move(target)) {
  if (library_) cannot_run_ = target::cannot_run_here(target_, "the native kernels");
  fallback_.resize(plan_.kernels.size());
  for (const Call& c : plan_.calls) {
    if (c.fallback && fallback_[static_cast<size_t>(c.function)].functions.empty()) {
      auto* f = plan_.kernels[static_cast<size_t>(c.function)]->as<ir::FunctionNode>();
      fallback_[static_cast<size_t>(c.function)].functions["main"] = ir::function(f->params, f->body);
    }
    if (c.external || c.fallback) {
      kernels_.push_back(nullptr);
      continue;
    }
    if (!library_) throw Error("kernel " + c.kernel + " is not in the native library (there is none)");
    kernels_.push_back(library_->get(c.kernel));
  }
  make_extern_states();
  give_back(take_arena());
}

struct Executable::ExternStates {
  struct State {
    const strategy::StatefulExtern* ext = nullptr;
    void* handle = nullptr;
  };
  std::vector<std::vector<State>> per_call;
  std::vector<std::vector<void*>> handles;  // per call, what the kernel is given
  ~ExternStates() {
    for (auto& states : per_call)
      for (State& s : states)
        if (s.handle) s.ext->destroy(s.handle);
  }
};

void Executable::make_extern_states() {
  states_ = std::make_shared<ExternStates>();
  states_->per_call.resize(plan_.calls.size());
  states_->handles.resize(plan_.calls.size());
  for (size_t ci = 0; ci < plan_.calls.size(); ++ci) {
    const Call& c = plan_.calls[ci];
    if (c.external || c.fallback) continue;
    const std::vector<codegen::ExternSite>& sites = library_->sites(c.kernel);
    if (sites.empty()) continue;
    if (!cannot_run_.empty()) continue;  // built for another CPU (to be saved): run() refuses it
    const size_t nargs = c.inputs.size() + c.outputs.size();
    if (library_->num_args(c.kernel) != static_cast<int>(nargs))
      throw Error("kernel " + c.kernel + " takes " + std::to_string(library_->num_args(c.kernel)) +
                  " buffers, the plan gives " + std::to_string(nargs));
    for (const codegen::ExternSite& site : sites) {
      const strategy::StatefulExtern* ext = strategy::find_stateful_extern(site.func);
      if (!ext)
        throw Error("kernel " + c.kernel + " calls the extern " + site.func +
                    ", which this program does not have (built without its library?)");
      std::vector<int32_t> dtypes, ranks;
      std::vector<const int64_t*> shapes;
      std::vector<const void*> constants;
      for (const codegen::ExternSite::Buffer& b : site.buffers) {
        const void* data = nullptr;
        if (b.param >= 0) {  // the site's view of a kernel argument must be the plan's value
          if (static_cast<size_t>(b.param) >= nargs)
            throw Error("kernel " + c.kernel + ": extern " + site.func + " reads argument " + std::to_string(b.param) +
                        " of " + std::to_string(nargs));
          const size_t p = static_cast<size_t>(b.param);
          int v = p < c.inputs.size() ? c.inputs[p] : c.outputs[p - c.inputs.size()];
          const Value& val = plan_.values[static_cast<size_t>(v)];  // a view has its own type
          if (static_cast<int>(val.dtype) != b.dtype || val.shape != Shape(b.shape.begin(), b.shape.end()))
            throw Error("kernel " + c.kernel + ": extern " + site.func + " argument " + std::to_string(b.param) +
                        " does not have the plan's type " + type_of(val));
          while (plan_.values[static_cast<size_t>(v)].alias_of >= 0) v = plan_.values[static_cast<size_t>(v)].alias_of;
          const Value& root = plan_.values[static_cast<size_t>(v)];
          if (root.kind == ValueKind::Constant) data = plan_.constants[static_cast<size_t>(root.index)].raw();
        }
        dtypes.push_back(b.dtype);
        ranks.push_back(static_cast<int32_t>(b.shape.size()));
        shapes.push_back(b.shape.data());
        constants.push_back(data);
      }
      sy_extern_site s{static_cast<int32_t>(site.buffers.size()), dtypes.data(), ranks.data(), shapes.data(),
                       constants.data(), static_cast<int32_t>(site.attrs.size()), site.attrs.data()};
      char err[512] = {0};
      states_->per_call[ci].reserve(sites.size());
      states_->handles[ci].reserve(sites.size());
      void* h = ext->init(&s, err, sizeof err);
      if (!h) throw ExternInitError(c.kernel, site.func + ": " + (err[0] ? err : "init failed"));
      states_->per_call[ci].push_back({ext, h});  // reserved: cannot throw
      states_->handles[ci].push_back(h);
    }
  }
}

const std::vector<void*>& Executable::extern_states(size_t ci) const { return states_->handles.at(ci); }

std::shared_ptr<uint8_t[]> Executable::take_arena() const {
  {
    std::lock_guard<std::mutex> lock(arenas_->mu);
    if (!arenas_->free.empty()) {
      std::shared_ptr<uint8_t[]> a = std::move(arenas_->free.back());
      arenas_->free.pop_back();
      return a;
    }
  }
  return allocate_tensor_storage(static_cast<size_t>(plan_.arena_bytes), /*zeroed=*/true, StorageLifetime::long_lived);
}

void Executable::give_back(std::shared_ptr<uint8_t[]> arena) const {
  std::lock_guard<std::mutex> lock(arenas_->mu);
  arenas_->free.push_back(std::move(arena));
}

std::string Executable::library_bytes() const { return library_ ? library_->so_bytes() : std::string(); }


// A backend module's results are checked against the function's type before any kernel reads
// them: a wrong count, shape or dtype is an error naming the region, never a wrong read.
void Executable::check_external_results(const Call& c, const std::vector<Tensor>& got) const {
  if (got.size() != c.outputs.size())
    throw Error("region @" + c.kernel + " returned " + std::to_string(got.size()) + " results, expected " +
                std::to_string(c.outputs.size()));
  for (size_t k = 0; k < got.size(); ++k) {
    const Value& v = plan_.values[static_cast<size_t>(c.outputs[k])];
    if (!has_type_of(got[k], v))
      throw Error("region @" + c.kernel + " result " + std::to_string(k) + ": expected " + type_of(v) + ", got " +
                  (got[k].defined() ? type_of(got[k]) : "no tensor"));
  }
}

template <typename Resolve>
void Executable::run_fallback(size_t ci, const Resolve& resolve) const {
  const Call& c = plan_.calls[ci];
  std::vector<Tensor> in;
  for (int v : c.inputs) {
    const Value& val = plan_.values[static_cast<size_t>(v)];
    in.push_back(Tensor::wrap(resolve(v), val.dtype, val.shape));
  }
  reference::ExecOptions opts;
  opts.threads = omp_get_max_threads();
  Result<std::vector<Tensor>> r = reference::run_module(fallback_[static_cast<size_t>(c.function)], in, opts);
  if (!r.is_ok()) throw Error(c.kernel + " (reference fallback): " + r.status().message());
  SY_CHECK(r->size() == c.outputs.size()) << c.kernel << ": fallback returned " << r->size() << " results";
  for (size_t k = 0; k < c.outputs.size(); ++k) std::memcpy(resolve(c.outputs[k]), (*r)[k].raw(), (*r)[k].nbytes());
}

std::vector<Tensor> Executable::run(const std::vector<Tensor>& inputs, int threads, const ExternalRunner& external,
                                    CallTimes* times) const {
  if (!cannot_run_.empty()) throw Error(cannot_run_);
  if (inputs.size() != plan_.inputs.size())
    throw Error("the model expects " + std::to_string(plan_.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = plan_.values[static_cast<size_t>(plan_.inputs[i])];
    if (!has_type_of(inputs[i], v))
      throw Error("input " + std::to_string(i) + ": expected " + type_of(v) +
                  (inputs[i].defined() ? ", got " + type_of(inputs[i]) : ""));
  }
  if (threads > 0) omp_set_num_threads(threads);
  // This run's activation memory, back to the pool when the run ends (or throws).
  std::shared_ptr<uint8_t[]> arena_storage = take_arena();
  struct Lease {
    const Executable* self;
    std::shared_ptr<uint8_t[]>& arena;
    ~Lease() { self->give_back(std::move(arena)); }
  } lease{this, arena_storage};
  char* const arena = reinterpret_cast<char*>(arena_storage.get());
  std::vector<Tensor> fresh(plan_.outputs.size());
  std::vector<std::vector<Tensor>> ext(plan_.calls.size());
  std::vector<void*> ptr(plan_.values.size(), nullptr);
  // Pointers of values that exist before any call.
  for (size_t v = 0; v < plan_.values.size(); ++v) {
    const Value& val = plan_.values[v];
    if (val.alias_of >= 0) continue;
    switch (val.kind) {
      case ValueKind::Input: ptr[v] = const_cast<void*>(inputs[static_cast<size_t>(val.index)].raw()); break;
      case ValueKind::Constant: ptr[v] = const_cast<void*>(plan_.constants[static_cast<size_t>(val.index)].raw()); break;
      case ValueKind::Storage: ptr[v] = arena + val.offset; break;
      case ValueKind::Output:
        fresh[static_cast<size_t>(val.index)] = Tensor::uninitialized(val.dtype, val.shape);
        ptr[v] = fresh[static_cast<size_t>(val.index)].raw();
        break;
      case ValueKind::External: break;  // set when its call runs
    }
  }
  auto resolve = [&](int v) -> void* {
    while (plan_.values[static_cast<size_t>(v)].alias_of >= 0) v = plan_.values[static_cast<size_t>(v)].alias_of;
    return ptr[static_cast<size_t>(v)];
  };
  if (times) {
    times->seconds.resize(plan_.calls.size(), 0.0);
    ++times->runs;
  }
  std::vector<void*> args;
  auto started = std::chrono::steady_clock::now();
  auto lap = [&](size_t ci) {
    if (!times) return;
    auto now = std::chrono::steady_clock::now();
    times->seconds[ci] += std::chrono::duration<double>(now - started).count();
    started = now;
  };
  for (size_t ci = 0; ci < plan_.calls.size(); ++ci) {
    const Call& c = plan_.calls[ci];
    if (c.elided) continue;
    if (c.external) {
      if (!external) throw Error("@" + c.kernel + " is an external function, but no backend module is loaded");
      std::vector<Tensor> in;
      for (int v : c.inputs) {
        const Value& val = plan_.values[static_cast<size_t>(v)];
        // A view over the value's bytes; the storage outlives the call.
        in.push_back(Tensor::wrap(resolve(v), val.dtype, val.shape));
      }
      ext[ci] = external(c.kernel, in);
      check_external_results(c, ext[ci]);
      for (size_t k = 0; k < c.outputs.size(); ++k) ptr[static_cast<size_t>(c.outputs[k])] = ext[ci][k].raw();
      lap(ci);
      continue;
    }
    if (c.fallback) {
      run_fallback(ci, resolve);
      lap(ci);
      continue;
    }
    args.clear();
    for (int v : c.inputs) args.push_back(resolve(v));
    for (int v : c.outputs) args.push_back(resolve(v));
    args.insert(args.end(), states_->handles[ci].begin(), states_->handles[ci].end());
    int32_t rc = kernels_[ci](args.data());
    if (rc != codegen::kKernelOk) throw Error("kernel " + c.kernel + ": " + codegen::kernel_fault_message(rc));
    lap(ci);
  }
  std::vector<Tensor> outs;
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    int v = plan_.outputs[i];
    const Value& val = plan_.values[static_cast<size_t>(v)];
    if (val.alias_of < 0 && val.kind == ValueKind::Output) {
      outs.push_back(fresh[static_cast<size_t>(val.index)]);
      continue;
    }
    // Inputs, constants, external results and views are copied: the caller owns its results.
    Tensor t = Tensor::uninitialized(val.dtype, val.shape);
    std::memcpy(t.raw(), resolve(v), t.nbytes());
    outs.push_back(t);
  }
  return outs;
}

}  // namespace sy::native
