// The Python package's extension (switchyard._switchyard), over the public C++ API only.
// NumPy arrays in without a copy where they are C-contiguous and of the input's dtype; results
// are NumPy arrays over the engine's own buffers (no copy out). The GIL is released while a
// model compiles or runs.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <switchyard/switchyard.h>

namespace py = pybind11;
namespace sy = switchyard;

namespace {

py::dtype to_numpy(sy::DType d) {
  switch (d) {
    case sy::DType::f32: return py::dtype::of<float>();
    case sy::DType::f64: return py::dtype::of<double>();
    case sy::DType::i8: return py::dtype::of<int8_t>();
    case sy::DType::i16: return py::dtype::of<int16_t>();
    case sy::DType::i32: return py::dtype::of<int32_t>();
    case sy::DType::i64: return py::dtype::of<int64_t>();
    case sy::DType::u8: return py::dtype::of<uint8_t>();
    case sy::DType::boolean: return py::dtype::of<bool>();
  }
  throw sy::Error("an unknown dtype");
}

sy::DType from_numpy(const py::dtype& d, const std::string& name) {
  const std::pair<py::dtype, sy::DType> known[] = {
      {py::dtype::of<float>(), sy::DType::f32},   {py::dtype::of<double>(), sy::DType::f64},
      {py::dtype::of<int8_t>(), sy::DType::i8},   {py::dtype::of<int16_t>(), sy::DType::i16},
      {py::dtype::of<int32_t>(), sy::DType::i32}, {py::dtype::of<int64_t>(), sy::DType::i64},
      {py::dtype::of<uint8_t>(), sy::DType::u8},  {py::dtype::of<bool>(), sy::DType::boolean}};
  for (const auto& [np, t] : known)
    if (d.is(np) || d.equal(np)) return t;
  throw sy::Error("input '" + name + "': NumPy dtype " + py::cast<std::string>(py::str(static_cast<const py::handle&>(d))) + " is not supported");
}

// An input as a view of the array's memory when it is C-contiguous and of the model's dtype;
// otherwise a converted copy (kept alive in `keep`).
sy::Tensor as_input(const std::string& name, py::handle value, const sy::TensorInfo* info, std::vector<py::object>& keep) {
  py::array a = py::array::ensure(value);
  if (!a) throw sy::Error("input '" + name + "': not an array");
  if (info && !a.dtype().equal(to_numpy(info->dtype))) a = a.attr("astype")(to_numpy(info->dtype));
  a = py::array::ensure(a, py::array::c_style);
  keep.push_back(a);
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  return sy::Tensor::view(const_cast<void*>(a.data()), from_numpy(a.dtype(), name), shape);
}

// A NumPy array over the tensor's memory, which it keeps alive.
py::array as_array(const sy::Tensor& t) {
  auto* owner = new sy::Tensor(t);
  py::capsule free(owner, [](void* p) { delete static_cast<sy::Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array(to_numpy(t.dtype()), shape, owner->data(), free);
}

py::dict info_dict(const sy::TensorInfo& t) {
  py::dict d;
  d["name"] = t.name;
  d["shape"] = t.shape;
  d["dtype"] = sy::dtype_name(t.dtype);
  return d;
}

py::list info_list(const std::vector<sy::TensorInfo>& v) {
  py::list l;
  for (const auto& t : v) l.append(info_dict(t));
  return l;
}

struct PyModel {
  sy::Compiled c;
  std::vector<sy::TensorInfo> inputs;

  py::dict run(const py::dict& feeds, int threads) const {
    std::vector<py::object> keep;
    std::map<std::string, sy::Tensor> in;
    for (const auto& [k, v] : feeds) {
      const std::string name = py::str(k);
      const sy::TensorInfo* info = nullptr;
      for (const auto& t : inputs)
        if (t.name == name) info = &t;
      in.emplace(name, as_input(name, v, info, keep));
    }
    std::map<std::string, sy::Tensor> out;
    {
      py::gil_scoped_release unlocked;
      out = c.run(in, threads);
    }
    py::dict d;
    for (const auto& [name, t] : out) d[py::str(name)] = as_array(t);
    return d;
  }

  py::dict inspect() const {
    sy::Summary s = c.inspect();
    py::dict d;
    d["inputs"] = info_list(s.inputs);
    d["outputs"] = info_list(s.outputs);
    d["target"] = s.target;
    d["native_kernels"] = s.native_kernels;
    d["activation_bytes"] = s.activation_bytes;
    py::list regions;
    for (const sy::Region& r : s.regions) {
      py::dict x;
      x["symbol"] = r.symbol;
      x["backend"] = r.backend;
      x["ops"] = r.ops;
      x["flops"] = r.flops;
      x["offloaded"] = r.offloaded;
      x["why"] = r.why;
      regions.append(x);
    }
    d["regions"] = regions;
    return d;
  }
};

}  // namespace

PYBIND11_MODULE(_switchyard, m) {
  m.doc() = "Switchyard: compile ONNX models for this CPU (native kernels and libraries such as oneDNN) and run them";
  // switchyard.Error, with the one-line message the command-line program prints.
  py::register_exception<sy::Error>(m, "Error");
  m.attr("__version__") = SWITCHYARD_VERSION;

  py::class_<PyModel>(m, "Model", "A compiled model: run it, save it, inspect it. Safe to run from several threads.")
      .def("run", &PyModel::run, py::arg("inputs"), py::arg("threads") = 0,
           "run({name: ndarray, ...}, threads=0) -> {name: ndarray}: every input by name; threads 0 = all cores.\n"
           "C-contiguous arrays of the input's dtype are read in place; results are arrays over the engine's buffers.")
      .def("save", [](const PyModel& p, const std::string& path) { p.c.save(path); }, py::arg("path"),
           "save(path): write the artifact (.sya), which sy.load reads without a compiler.")
      .def("inspect", &PyModel::inspect,
           "inspect() -> dict: inputs, outputs (name, shape, dtype), target, native kernel launches, planned\n"
           "activation bytes, and the regions offloaded to libraries (or kept native, and why).")
      .def_property_readonly("inputs", [](const PyModel& p) { return info_list(p.inputs); }, "The inputs: name, shape, dtype.");

  m.def(
      "compile",
      [](const std::string& model, const std::string& target, const std::vector<std::string>& backends,
         const std::map<std::string, std::string>& prefer, const std::string& placement, const std::string& records,
         int threads, const std::map<std::string, std::vector<int64_t>>& input_shapes,
         const std::function<void(const std::string&)>& progress) {
        sy::LoadOptions lo;
        lo.input_shapes = input_shapes;
        sy::CompileOptions o;
        o.target = target;
        o.backends = backends;
        o.prefer = prefer;
        o.placement = placement;
        o.records = records;
        o.threads = threads;
        if (progress)
          o.progress = [progress](const std::string& s) {
            py::gil_scoped_acquire locked;
            progress(s);
          };
        PyModel p;
        {
          py::gil_scoped_release unlocked;
          sy::Model mod = sy::Model::load(model, lo);
          p.inputs = mod.inputs();
          p.c = sy::compile(mod, o);
        }
        return p;
      },
      py::arg("model"), py::arg("target") = "cpu", py::arg("backends") = std::vector<std::string>{},
      py::arg("prefer") = std::map<std::string, std::string>{}, py::arg("placement") = "rules",
      py::arg("records") = "", py::arg("threads") = 0,
      py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{}, py::arg("progress") = nullptr,
      "compile(model, target='cpu', backends=[], prefer={}, placement='rules', records='', threads=0,\n"
      "        input_shapes={}, progress=None) -> Model\n\n"
      "model: an .onnx file, a .sy text-IR file or 'zoo:NAME'. target: 'cpu' (this machine), a cpu target\n"
      "string such as 'cpu -isa=avx2', or 'reference'. backends: libraries in priority order (see\n"
      "available_backends()). prefer: {op: backend}. placement: 'rules' or 'measured' (timed on this machine).\n"
      "records: a tuning records file (switchyard tune). input_shapes: {input: shape} for symbolic dimensions.\n"
      "progress: called with one line of progress at a time.");
  m.def(
      "load",
      [](const std::string& path) {
        PyModel p;
        py::gil_scoped_release unlocked;
        p.c = sy::Compiled::load(path);
        p.inputs = p.c.inspect().inputs;
        return p;
      },
      py::arg("path"), "load(path) -> Model: an artifact written by Model.save or `switchyard compile`.");
  m.def(
      "tune",
      [](const std::string& model, const std::string& records, const std::string& target, int trials,
         double time_budget, bool externs, int threads, const std::map<std::string, std::vector<int64_t>>& input_shapes,
         bool model_check) {
        sy::TuneOptions o;
        o.target = target;
        o.trials = trials;
        o.time_budget_s = time_budget;
        o.externs = externs;
        o.threads = threads;
        o.input_shapes = input_shapes;
        o.model_check = model_check;
        py::gil_scoped_release unlocked;
        return sy::tune(model, records, o);
      },
      py::arg("model"), py::arg("records"), py::arg("target") = "cpu", py::arg("trials") = 12,
      py::arg("time_budget") = 840.0, py::arg("externs") = true, py::arg("threads") = 0,
      py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{}, py::arg("model_check") = true,
      "tune(model, records, target='cpu', trials=12, time_budget=840, externs=True, threads=0, input_shapes={},\n"
      "     model_check=True) -> str\n\n"
      "Measures every native kernel's implementations and knobs on this machine and appends the records to\n"
      "`records` (resumed from it); compile(model, records=records) then uses them. Returns the summary line.\n"
      "model_check: after a run that tuned kernels, time the model end to end with the records' choices and\n"
      "without records (and keeping layouts); a way faster by 2%, twice, is marked in the records.");
  m.def("available_backends", &sy::available_backends, "The libraries built in (what compile's backends accepts).");
}
