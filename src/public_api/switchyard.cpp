// The public C++ API (include/switchyard/switchyard.h) over the internal one: a pimpl per class,
// every internal error turned into switchyard::Error with the same message.
#include "switchyard/switchyard.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>

#include "access.h"
#include "api/analysis.h"
#include "api/compile.h"
#include "api/inputs.h"
#include "api/load.h"
#include "backends/backend.h"
#include "backends/reference/executor.h"
#include "ir/printer.h"
#include "runtime/artifact.h"
#include "support/npy.h"
#include "support/random_tensor.h"
#include "support/tensor.h"

namespace switchyard {

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

std::vector<sy::Tensor> internal_tensors(const std::vector<Tensor>& in) {
  std::vector<sy::Tensor> out;
  for (const Tensor& t : in) out.push_back(Access::get(t));
  return out;
}

std::vector<Tensor> public_tensors(std::vector<sy::Tensor> in) {
  std::vector<Tensor> out;
  for (sy::Tensor& t : in) out.push_back(Access::wrap(std::move(t)));
  return out;
}

namespace {

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
  for (const auto& [name, shape] : o.data_shapes) lo.data_shapes[name] = shape;
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
Tensor Tensor::random(DType dtype, std::vector<int64_t> shape, uint64_t seed) {
  return guarded([&] { return Access::wrap(sy::random_tensor(shape, to_internal(dtype), seed)); });
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
    if (!opts.dump_after.empty()) spec.after_pass = ir_dumper(opts.dump_after, opts.on_ir);
    const sy::ir::Module& m = Access::module(model);
    sy::api::Compilation c = sy::api::compile(m, spec);
    std::shared_ptr<Compiled::Impl> impl = finish(std::move(c.model), std::move(c.partition.report));
    impl->total_flops = sy::api::analyze(m).flops;
    impl->placement = std::move(c.placement);
    impl->placement_nodes = std::move(c.placement_nodes);
    impl->records = std::move(c.records);
    impl->warnings = std::move(c.warnings);
    impl->native = std::move(c.native);
    if (impl->native && !opts.keep_generated_c) impl->native->generated_c.clear();
    return Access::compiled(std::move(impl));
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
      s.native = true;
      s.native_kernels = impl.model.native->plan().kernel_launches;
      s.activation_bytes = static_cast<int64_t>(impl.model.native->plan().arena_bytes);
      s.intermediate_bytes = static_cast<int64_t>(impl.model.native->plan().intermediate_bytes);
    }
    for (const auto& [backend, module] : impl.model.modules) {
      s.backend_modules.push_back(backend);
      const int64_t b = module->activation_bytes();
      s.backend_activation_bytes = b < 0 || s.backend_activation_bytes < 0 ? -1 : s.backend_activation_bytes + b;
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

std::vector<Tensor> Compiled::run_ordered(const std::vector<Tensor>& inputs, int threads) const {
  return guarded([&] {
    const Impl& impl = Access::impl(*this);
    return public_tensors(impl.model.run(internal_tensors(inputs), threads));
  });
}

std::vector<std::string> Compiled::input_names() const { return Access::impl(*this).input_names; }
std::vector<std::string> Compiled::output_names() const { return Access::impl(*this).output_names; }

std::vector<InputValue> Compiled::prepare_inputs(const std::map<std::string, std::string>& files,
                                                 uint64_t seed) const {
  return guarded([&] {
    std::vector<InputValue> out;
    for (sy::api::PreparedInput& in : sy::api::prepare_inputs(Access::impl(*this).model.module, files, seed))
      out.push_back({in.name, in.source, Access::wrap(std::move(in.value))});
    return out;
  });
}

Model Compiled::model() const { return Access::model(Access::impl(*this).model.module); }

ModelStats Model::stats() const {
  return guarded([&] {
    const sy::ir::Module& m = Access::module(*this);
    sy::api::ModelStats st = sy::api::analyze(m);
    ModelStats s;
    s.inputs = infos(st.inputs);
    s.outputs = infos(st.outputs);
    s.op_histogram = st.op_histogram;
    s.num_ops = st.num_ops;
    s.params = st.params;
    s.param_bytes = st.param_bytes;
    s.flops = st.flops;
    for (const sy::api::NodeFlops& n : st.nodes) s.nodes.push_back({n.op, n.output_shape, n.flops});
    if (sy::native::is_fused(m)) {
      sy::native::Plan plan = sy::native::plan_module(m);
      s.compiled = true;
      s.plan.kernel_launches = plan.kernel_launches;
      s.plan.distinct_kernels = static_cast<int64_t>(plan.kernels.size());
      s.plan.calls = static_cast<int64_t>(plan.calls.size());
      s.plan.planned_bytes = static_cast<int64_t>(plan.arena_bytes);
      s.plan.intermediate_bytes = static_cast<int64_t>(plan.intermediate_bytes);
    }
    return s;
  });
}

std::string Model::text(bool weights) const {
  return guarded([&] {
    sy::ir::PrintOptions po;
    po.constant_data = weights;
    return sy::ir::print_module(Access::module(*this), po);
  });
}

std::vector<Tensor> Model::run_reference(const std::vector<Tensor>& inputs, int threads) const {
  return guarded([&] {
    sy::reference::ExecOptions opts;
    opts.threads = threads;
    sy::Result<std::vector<sy::Tensor>> r = sy::reference::run_module(Access::module(*this), internal_tensors(inputs), opts);
    if (!r) throw Error(r.status().message());
    return public_tensors(std::move(r.value()));
  });
}

sy::ir::Module load_any(const std::string& spec, const std::map<std::string, std::vector<int64_t>>& input_shapes) {
  if (sy::runtime::looks_like_artifact(spec)) {
    if (!input_shapes.empty()) throw Error(spec + ": an artifact has fixed input shapes; drop --input-shape");
    return sy::runtime::load_artifact(spec, sy::backends::BackendRegistry::global().all()).module;
  }
  sy::api::LoadOptions lo;
  for (const auto& [name, shape] : input_shapes) lo.input_shapes[name] = shape;
  return sy::api::load_model(spec, lo);
}

bool is_artifact(const std::string& path) {
  return guarded([&] { return sy::runtime::looks_like_artifact(path); });
}

std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& text) {
  return guarded([&] {
    auto [name, shape] = sy::api::parse_input_shape(text);
    return std::pair<std::string, std::vector<int64_t>>(name, std::vector<int64_t>(shape.begin(), shape.end()));
  });
}

std::pair<std::string, std::string> parse_input_file(const std::string& text) {
  return guarded([&] { return sy::api::parse_input_file(text); });
}


}  // namespace switchyard
