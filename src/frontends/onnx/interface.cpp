#include "frontends/onnx/interface.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <set>

#include "frontends/onnx/model_parse.h"
#include "frontends/onnx/tensor_proto.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace sy::onnx {

namespace {

DeclaredTensor declared(const ::onnx::ValueInfoProto& vi) {
  DeclaredTensor t;
  t.name = vi.name();
  if (!vi.has_type() || !vi.type().has_tensor_type()) {
    t.dtype = !vi.has_type() ? "untyped" : vi.type().has_sequence_type() ? "sequence" : "non-tensor";
    return t;
  }
  const auto& tt = vi.type().tensor_type();
  t.dtype = onnx_dtype_name(tt.elem_type());
  if (!tt.has_shape()) return t;
  std::vector<std::string> dims;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() > 0) dims.push_back(std::to_string(d.dim_value()));
    else dims.push_back(d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
  }
  t.dims = dims;
  return t;
}

}  // namespace

bool DeclaredTensor::is_static() const {
  return dims && std::all_of(dims->begin(), dims->end(), [](const std::string& d) {
           return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
         });
}

Result<DeclaredInterface> declared_interface(const std::string& path) {
  return catch_errors([&]() -> DeclaredInterface {
    try {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) throw Error("cannot open model file: no such file");
      const auto size = std::filesystem::file_size(path, ec);
      if (ec) throw Error("cannot read model file: " + ec.message());
      if (size == 0) throw Error("not a valid ONNX model: the file is empty");
      if (size > static_cast<uintmax_t>(INT_MAX)) throw Error("model file is over 2 GiB; protobuf cannot parse it");
      MappedFile file(path, static_cast<size_t>(size), "model file");
      ParsedModel parsed;
      if (!parse_model(file.view(), parsed))
        throw Error("not a valid ONNX model: protobuf parse failed (truncated or corrupted file?)");
      if (!parsed.model.has_graph()) throw Error("not a valid ONNX model: no graph");
      const auto& g = parsed.model.graph();
      std::set<std::string> inits;
      for (const auto& t : g.initializer()) inits.insert(t.name());
      DeclaredInterface out;
      for (const auto& vi : g.input())
        if (!inits.count(vi.name())) out.inputs.push_back(declared(vi));
      for (const auto& vi : g.output()) out.outputs.push_back(declared(vi));
      return out;
    } catch (const Error& e) {
      throw Error(path + ": " + e.what());
    }
  });
}

}  // namespace sy::onnx
