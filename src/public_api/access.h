// Inside the public API's implementation (src/public_api/*.cpp): the impls of the public classes,
// the bridge to them (Access, a friend of each), the dtype conversions and the error guard.
#pragma once
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/analysis.h"
#include "native/compile.h"
#include "partition/pipeline.h"
#include "runtime/compiled_model.h"
#include "support/error.h"
#include "support/tensor.h"
#include "switchyard/report.h"
#include "switchyard/switchyard.h"

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
  // Set by compile() (not by an artifact): what compile_report() tells.
  int64_t total_flops = 0;
  std::string placement, placement_nodes, records;
  std::vector<std::string> warnings;
  std::optional<sy::native::Compiled> native;
};
struct Partitioned::Impl {
  sy::partition::PartitionResult result;
  int64_t total_flops = 0;
  std::string placement, placement_nodes;  // measured placement's lines
};

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
  static Partitioned partitioned(std::shared_ptr<Partitioned::Impl> impl) {
    Partitioned p;
    p.impl_ = std::move(impl);
    return p;
  }
  static const Partitioned::Impl& impl(const Partitioned& p) {
    if (!p.impl_) throw Error("an empty partitioned model (default-constructed)");
    return *p.impl_;
  }
};

// Runs f, turning internal errors into switchyard::Error with the same one-line message (a
// failed consistency check into InternalError, running out of memory into "out of memory").
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const sy::InternalError& e) {
    throw InternalError(e.what());
  } catch (const std::bad_alloc&) {
    throw Error("out of memory");
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

sy::DType to_internal(DType d);
DType to_public(sy::DType d);
std::vector<TensorInfo> infos(const std::vector<sy::api::TensorInfo>& in);
std::vector<sy::Tensor> internal_tensors(const std::vector<Tensor>& in);
std::vector<Tensor> public_tensors(std::vector<sy::Tensor> in);
// A partition report as the public API gives it.
PartitionReport public_report(const sy::partition::PartitionReport& r, int64_t total_flops);
// The text IR (without weights) after partition passes, as PartitionOptions/CompileOptions ask.
std::function<void(const std::string&, const sy::ir::Module&)> ir_dumper(
    const std::string& dump_after, const std::function<void(const std::string&, const std::string&)>& on_ir);
// Per kernel of a plan: the implementations that apply, the one chosen and why.
std::string kernel_choices_text(const sy::native::Plan& p, const std::vector<sy::strategy::Choice>& choices,
                                const sy::target::Target& t);
// A spec loaded as the command line does: an artifact's compiled module, or a model.
sy::ir::Module load_any(const std::string& spec, const std::map<std::string, std::vector<int64_t>>& input_shapes);

}  // namespace switchyard
