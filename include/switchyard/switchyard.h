// Switchyard's public C++ API: load a model, compile it (native kernels, external libraries),
// save and load artifacts, inspect, and run with named tensors.
//
//   #include <switchyard/switchyard.h>
//
//   switchyard::Model model = switchyard::Model::load("resnet50.onnx");
//   switchyard::CompileOptions opts;
//   opts.backends = {"onednn"};
//   switchyard::Compiled net = switchyard::compile(model, opts);
//   net.save("resnet50.sya");                       // loads later without a compiler
//   std::map<std::string, switchyard::Tensor> out = net.run({{"input", image}});
//
// Every failure is a switchyard::Error whose what() is the one-line message the command-line
// program prints. A Compiled model may be run from several threads at once. No internal type
// appears here; this header and <switchyard/version.h> are all a user includes.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "switchyard/version.h"

// What libswitchyard.so exports (everything else in it is hidden).
#define SWITCHYARD_API __attribute__((visibility("default")))

namespace switchyard {

class SWITCHYARD_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DType { f32, f64, i8, i16, i32, i64, u8, boolean };
SWITCHYARD_API const char* dtype_name(DType t);  // "float32", ...
SWITCHYARD_API size_t dtype_size(DType t);

// A dense row-major tensor. Owning (allocated, zeroed) or a view of memory the caller owns and
// keeps alive while the tensor is in use (no copy). Copies of a Tensor share its memory.
class SWITCHYARD_API Tensor {
 public:
  Tensor();
  Tensor(DType dtype, std::vector<int64_t> shape);
  static Tensor view(void* data, DType dtype, std::vector<int64_t> shape);

  DType dtype() const;
  const std::vector<int64_t>& shape() const;
  int64_t numel() const;
  size_t nbytes() const;
  void* data();
  const void* data() const;
  template <typename T> T* data_as() { return static_cast<T*>(data()); }
  template <typename T> const T* data_as() const { return static_cast<const T*>(data()); }

  // .npy files (the CLI's format).
  static Tensor load_npy(const std::string& path);
  void save_npy(const std::string& path) const;

  struct Impl;

 private:
  explicit Tensor(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
  friend struct Access;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::f32;
};

struct LoadOptions {
  // Input name -> static shape: fixes symbolic dimensions of an ONNX model, or the batch, image
  // size or sequence length of a zoo model.
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

// A model as loaded, before compiling.
class SWITCHYARD_API Model {
 public:
  // An ONNX file, a text-IR file (.sy) or "zoo:NAME" (see `switchyard zoo`).
  static Model load(const std::string& path, const LoadOptions& opts = {});
  // The bytes of an ONNX model.
  static Model from_onnx_bytes(const std::string& bytes, const LoadOptions& opts = {});

  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;
  int64_t flops() const;   // per inference (a multiply-add counts 2)
  int64_t params() const;  // trained parameters

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
  friend struct Access;
};

struct CompileOptions {
  // Where what no backend takes runs: "cpu" (native kernels for this machine), a cpu target
  // string such as "cpu -isa=avx2", or "reference" (the reference executor).
  std::string target = "cpu";
  std::vector<std::string> backends;          // external libraries, in priority order (e.g. "onednn")
  std::map<std::string, std::string> prefer;  // IR op name -> backend asked first for it
  std::string placement = "rules";            // "rules", or "measured" on this machine
  std::string records;                        // tuning (and placement) records file, or ""
  int threads = 0;                            // measured placement times with this many (0: all cores)
  std::function<void(const std::string&)> progress;  // one line of progress at a time
};

// Which part of the model runs where.
struct Region {
  std::string symbol;   // "" for a region that was not offloaded
  std::string backend;  // the library that claimed it
  std::vector<std::string> ops;
  int64_t flops = 0;
  bool offloaded = false;
  std::string why;  // why not offloaded, or the measurement that kept it
};

struct Summary {
  std::vector<TensorInfo> inputs, outputs;
  std::string target;
  std::vector<Region> regions;
  int64_t native_kernels = 0;       // kernel launches per run
  int64_t activation_bytes = 0;     // planned for the native kernels' intermediates
};

// A compiled model: runnable, savable. Safe to run from several threads at once.
class SWITCHYARD_API Compiled {
 public:
  static Compiled load(const std::string& artifact_path);
  void save(const std::string& artifact_path) const;

  Summary inspect() const;

  // Inputs by name (all of them); outputs by name. threads: 0 = all cores.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs, int threads = 0) const;
  // The same into tensors the caller allocated (each output's name, shape and dtype must match).
  void run(const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor>& outputs,
           int threads = 0) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
  friend struct Access;
};

SWITCHYARD_API Compiled compile(const Model& model, const CompileOptions& opts = {});

struct TuneOptions {
  std::string target = "cpu";
  int trials = 12;              // candidates per kernel at most
  double time_budget_s = 840;   // no candidate is started after this
  bool externs = true;          // false: the libraries' implementations are not candidates
  int threads = 0;              // threads a candidate runs on (0: the target's cores)
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

// Measures the implementations and knobs of every native kernel of `model` (a path or
// "zoo:NAME") and appends the records to `records` (resumed from it: tuned kernels are
// skipped); compile with CompileOptions::records = records to use them. Runs `switchyard tune`
// (installed beside the library) in a child process, since the tuner forks a process per
// candidate, which a program whose OpenMP threads have started cannot do safely. Returns its
// summary line ("tuned 3 of 4 tasks in 0:12 ...").
SWITCHYARD_API std::string tune(const std::string& model, const std::string& records, const TuneOptions& opts = {});

// The names of the external libraries built in (what CompileOptions::backends accepts).
SWITCHYARD_API std::vector<std::string> available_backends();

}  // namespace switchyard
