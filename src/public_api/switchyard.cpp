// The public C++ API (include/switchyard/switchyard.h) over the internal one: a pimpl per class,
// every internal error turned into switchyard::Error with the same message.
#include "switchyard/switchyard.h"

#include <dlfcn.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <mutex>
#include <utility>

#include "api/analysis.h"
#include "api/compile.h"
#include "api/load.h"
#include "backends/backend.h"
#include "runtime/artifact.h"
#include "support/npy.h"
#include "support/tensor.h"

namespace switchyard {

struct Tensor::Impl {
  sy::Tensor t;
};
struct Model::Impl {
  sy::ir::Module module;
};
struct Compiled::Impl {
  sy::runtime::CompiledModel model;
  sy::partition::PartitionReport report;
  std::vector<std::string> input_names, output_names;
};

// The bridge between the public classes and their impls (friend of each).
struct Access {
  static Tensor wrap(sy::Tensor t) { return Tensor(std::make_shared<Tensor::Impl>(Tensor::Impl{std::move(t)})); }
  static const sy::Tensor& get(const Tensor& t) {
    if (!t.impl_) throw Error("an empty tensor (default-constructed) given as a value");
    return t.impl_->t;
  }
  static Model model(sy::ir::Module m) {
    Model out;
    out.impl_ = std::make_shared<Model::Impl>(Model::Impl{std::move(m)});
    return out;
  }
  static const sy::ir::Module& module(const Model& m) {
    if (!m.impl_) throw Error("an empty model (default-constructed)");
    return m.impl_->module;
  }
  static Compiled compiled(std::shared_ptr<Compiled::Impl> impl) {
    Compiled c;
    c.impl_ = std::move(impl);
    return c;
  }
  static const Compiled::Impl& impl(const Compiled& c) {
    if (!c.impl_) throw Error("an empty compiled model (default-constructed)");
    return *c.impl_;
  }
};

namespace {

// Runs f, turning internal errors into switchyard::Error with the same one-line message.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

sy::DType to_internal(DType d) {
  switch (d) {
    case DType::f32: return sy::DType::f32;
    case DType::f64: return sy::DType::f64;
    case DType::i8: return sy::DType::i8;
    case DType::i16: return sy::DType::i16;
    case DType::i32: return sy::DType::i32;
    case DType::i64: return sy::DType::i64;
    case DType::u8: return sy::DType::u8;
    case DType::boolean: return sy::DType::boolean;
  }
  throw Error("an unknown dtype");
}

DType to_public(sy::DType d) {
  switch (d) {
    case sy::DType::f32: return DType::f32;
    case sy::DType::f64: return DType::f64;
    case sy::DType::i8: return DType::i8;
    case sy::DType::i16: return DType::i16;
    case sy::DType::i32: return DType::i32;
    case sy::DType::i64: return DType::i64;
    case sy::DType::u8: return DType::u8;
    case sy::DType::boolean: return DType::boolean;
  }
  throw Error("an unknown dtype");
}

std::vector<TensorInfo> infos(const std::vector<sy::api::TensorInfo>& in) {
  std::vector<TensorInfo> out;
  for (const auto& t : in) out.push_back({t.name, t.shape, to_public(t.dtype)});
  return out;
}

std::shared_ptr<Compiled::Impl> finish(sy::runtime::CompiledModel m, sy::partition::PartitionReport report) {
  auto impl = std::make_shared<Compiled::Impl>();
  impl->model = std::move(m);
  impl->report = std::move(report);
  for (const sy::ir::Expr& p : impl->model.module.main().params)
    impl->input_names.push_back(p->as<sy::ir::VarNode>()->name);
  impl->output_names = sy::api::output_names(impl->model.module);
  return impl;
}

sy::api::LoadOptions load_options(const LoadOptions& o) {
  sy::api::LoadOptions lo;
  for (const auto& [name, shape] : o.input_shapes) lo.input_shapes[name] = shape;
  return lo;
}

}  // namespace

const char* dtype_name(DType t) { return sy::dtype_name(to_internal(t)).data(); }
size_t dtype_size(DType t) { return sy::dtype_size(to_internal(t)); }

Tensor::Tensor() = default;
Tensor::Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : impl_(guarded([&] { return std::make_shared<Impl>(Impl{sy::Tensor(to_internal(dtype), std::move(shape))}); })) {}
Tensor Tensor::view(void* data, DType dtype, std::vector<int64_t> shape) {
  if (!data) throw Error("Tensor::view of a null pointer");
  return guarded([&] { return Access::wrap(sy::Tensor::wrap(data, to_internal(dtype), std::move(shape))); });
}
DType Tensor::dtype() const { return to_public(Access::get(*this).dtype()); }
const std::vector<int64_t>& Tensor::shape() const { return Access::get(*this).shape(); }
int64_t Tensor::numel() const { return Access::get(*this).numel(); }
size_t Tensor::nbytes() const { return Access::get(*this).nbytes(); }
void* Tensor::data() { return const_cast<void*>(Access::get(*this).raw()); }
const void* Tensor::data() const { return Access::get(*this).raw(); }
Tensor Tensor::load_npy(const std::string& path) {
  return guarded([&] { return Access::wrap(sy::npy::read_file(path)); });
}
void Tensor::save_npy(const std::string& path) const {
  guarded([&] { sy::npy::write_file(path, Access::get(*this)); });
}

Model Model::load(const std::string& path, const LoadOptions& opts) {
  return guarded([&] { return Access::model(sy::api::load_model(path, load_options(opts))); });
}

Model Model::from_onnx_bytes(const std::string& bytes, const LoadOptions& opts) {
  return guarded([&] { return Access::model(sy::api::load_onnx_bytes(bytes, load_options(opts))); });
}

std::vector<TensorInfo> Model::inputs() const {
  return guarded([&] { return infos(sy::api::analyze(Access::module(*this)).inputs); });
}
std::vector<TensorInfo> Model::outputs() const {
  return guarded([&] { return infos(sy::api::analyze(Access::module(*this)).outputs); });
}
int64_t Model::flops() const {
  return guarded([&] { return sy::api::analyze(Access::module(*this)).flops; });
}
int64_t Model::params() const {
  return guarded([&] { return sy::api::analyze(Access::module(*this)).params; });
}

Compiled compile(const Model& model, const CompileOptions& opts) {
  return guarded([&] {
    sy::api::CompileSpec spec;
    spec.target = opts.target;
    spec.backends = opts.backends;
    spec.prefer = opts.prefer;
    spec.placement = opts.placement;
    spec.records = opts.records;
    spec.threads = opts.threads;
    spec.progress = opts.progress;
    sy::api::Compilation c = sy::api::compile(Access::module(model), spec);
    return Access::compiled(finish(std::move(c.model), std::move(c.partition.report)));
  });
}

Compiled Compiled::load(const std::string& artifact_path) {
  return guarded([&] {
    return Access::compiled(finish(sy::runtime::load_artifact(artifact_path, sy::backends::BackendRegistry::global().all()), {}));
  });
}

void Compiled::save(const std::string& artifact_path) const {
  guarded([&] { sy::runtime::save_artifact(Access::impl(*this).model, artifact_path); });
}

Summary Compiled::inspect() const {
  return guarded([&] {
    const Impl& impl = Access::impl(*this);
    Summary s;
    sy::api::ModelStats st = sy::api::analyze(impl.model.module);
    s.inputs = infos(st.inputs);
    s.outputs = infos(st.outputs);
    s.target = impl.model.target.str();
    for (const sy::partition::RegionReport& r : impl.report.regions)
      s.regions.push_back({r.symbol, r.backend, r.ops, r.flops, r.offloaded, r.offloaded ? r.measured : r.why_not});
    // A loaded artifact has no partition report: its regions are its external functions.
    if (impl.report.regions.empty())
      for (const auto& [symbol, backend] : impl.model.backend_of) s.regions.push_back({symbol, backend, {}, 0, true, ""});
    if (impl.model.native) {
      s.native_kernels = impl.model.native->plan().kernel_launches;
      s.activation_bytes = static_cast<int64_t>(impl.model.native->plan().arena_bytes);
    }
    return s;
  });
}

std::map<std::string, Tensor> Compiled::run(const std::map<std::string, Tensor>& inputs, int threads) const {
  return guarded([&] {
    const Impl& impl = Access::impl(*this);
    std::vector<sy::Tensor> in;
    for (const std::string& name : impl.input_names) {
      auto it = inputs.find(name);
      if (it == inputs.end()) throw Error("input '" + name + "' is missing");
      in.push_back(Access::get(it->second));
    }
    for (const auto& [name, t] : inputs)
      if (std::find(impl.input_names.begin(), impl.input_names.end(), name) == impl.input_names.end())
        throw Error("the model has no input '" + name + "'");
    std::vector<sy::Tensor> out = impl.model.run(in, threads);
    std::map<std::string, Tensor> named;
    for (size_t k = 0; k < out.size() && k < impl.output_names.size(); ++k)
      named[impl.output_names[k]] = Access::wrap(std::move(out[k]));
    return named;
  });
}

void Compiled::run(const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor>& outputs,
                   int threads) const {
  std::map<std::string, Tensor> got = run(inputs, threads);
  for (auto& [name, dst] : outputs) {
    auto it = got.find(name);
    if (it == got.end()) throw Error("the model has no output '" + name + "'");
    const sy::Tensor& src = Access::get(it->second);
    const sy::Tensor& d = Access::get(dst);
    if (d.shape() != src.shape() || d.dtype() != src.dtype())
      throw Error("output '" + name + "': the given tensor is " + std::string(sy::dtype_name(d.dtype())) + " " +
                  sy::shape_str(d.shape()) + ", the model's is " + std::string(sy::dtype_name(src.dtype())) + " " +
                  sy::shape_str(src.shape()));
    std::memcpy(dst.data(), src.raw(), src.nbytes());
  }
}

namespace {

// The `switchyard` program beside this library: PREFIX/lib/libswitchyard.so -> PREFIX/bin/switchyard
// (the build tree has the same shape); $SWITCHYARD_CLI overrides.
std::string cli_path() {
  if (const char* p = std::getenv("SWITCHYARD_CLI"); p && *p) return p;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cli_path), &info) || !info.dli_fname)
    throw Error("tune: cannot locate libswitchyard.so to find the switchyard program (set SWITCHYARD_CLI)");
  std::filesystem::path p = std::filesystem::path(info.dli_fname).parent_path().parent_path() / "bin" / "switchyard";
  if (!std::filesystem::exists(p))
    throw Error("tune: no switchyard program at " + p.string() + " (set SWITCHYARD_CLI to its path)");
  return p.string();
}

}  // namespace

std::string tune(const std::string& model, const std::string& records, const TuneOptions& opts) {
  if (records.empty()) throw Error("tune: a records file to write is required");
  std::vector<std::string> argv{cli_path(), "tune", model, "-o", records, "--target", opts.target,
                                "--trials", std::to_string(opts.trials), "--time-budget",
                                std::to_string(opts.time_budget_s), "--threads", std::to_string(opts.threads)};
  if (!opts.externs) argv.push_back("--no-externs");
  for (const auto& [name, shape] : opts.input_shapes) {
    std::string dims;
    for (int64_t d : shape) {
      if (!dims.empty()) dims += ',';
      dims += std::to_string(d);
    }
    argv.push_back("--input-shape");
    argv.push_back(name + "=" + dims);
  }
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) throw Error("tune: cannot create pipes");
  pid_t pid = fork();
  if (pid < 0) throw Error("tune: cannot start " + argv[0]);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  // Both pipes drained together (a child blocked on a full stderr would never finish stdout).
  std::string stdout_text, stderr_text;
  char buf[4096];
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    fd_set fds;
    FD_ZERO(&fds);
    if (out_open) FD_SET(out[0], &fds);
    if (err_open) FD_SET(err[0], &fds);
    if (select(std::max(out[0], err[0]) + 1, &fds, nullptr, nullptr, nullptr) < 0) break;
    for (auto [fd, open, text] : {std::tuple<int, bool*, std::string*>{out[0], &out_open, &stdout_text},
                                  std::tuple<int, bool*, std::string*>{err[0], &err_open, &stderr_text}}) {
      if (!*open || !FD_ISSET(fd, &fds)) continue;
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) *open = false;
      else text->append(buf, static_cast<size_t>(n));
    }
  }
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  auto last_line = [](const std::string& t) {
    std::string s = t;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    size_t nl = s.find_last_of('\n');
    s = nl == std::string::npos ? s : s.substr(nl + 1);
    const std::string prefix = "switchyard: error: ";
    return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
  };
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = last_line(stderr_text);
    throw Error(why.empty() ? "tune: " + argv[0] + " failed (exit status " + std::to_string(status) + ")" : why);
  }
  std::istringstream lines(stdout_text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("tuned ", 0) == 0) return line;
  return last_line(stdout_text);
}

std::vector<std::string> available_backends() { return sy::backends::BackendRegistry::global().names(); }

}  // namespace switchyard
