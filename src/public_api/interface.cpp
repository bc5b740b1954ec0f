// onnx_interface: an ONNX model's declared inputs and outputs, symbolic dimensions and all.
#include "access.h"
#include "frontends/onnx/interface.h"
#include "switchyard/switchyard.h"

namespace switchyard {

namespace {

DeclaredTensor to_public(const sy::onnx::DeclaredTensor& t) {
  DeclaredTensor d;
  d.name = t.name;
  d.dtype = t.dtype;
  d.has_shape = t.dims.has_value();
  if (t.dims) d.dims = *t.dims;
  d.is_static = t.is_static();
  return d;
}

}  // namespace

DeclaredInterface onnx_interface(const std::string& path) {
  return guarded([&] {
    sy::Result<sy::onnx::DeclaredInterface> r = sy::onnx::declared_interface(path);
    if (!r) throw sy::Error(r.status().message());
    DeclaredInterface out;
    for (const auto& t : r->inputs) out.inputs.push_back(to_public(t));
    for (const auto& t : r->outputs) out.outputs.push_back(to_public(t));
    return out;
  });
}

}  // namespace switchyard
