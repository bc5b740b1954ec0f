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
// appears here; this header and <switchyard/version.h> are all a user includes
// (<switchyard/report.h>: partition, compile and profile reports; <switchyard/target.h>: targets).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/version.h"

// What libswitchyard.so exports (everything else in it is hidden).
#define SWITCHYARD_API __attribute__((visibility("default")))

namespace switchyard {

class SWITCHYARD_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failed internal consistency check: a bug in switchyard, not in the caller's input (the
// command-line program adds "this is a bug in switchyard; please report it").
class SWITCHYARD_API InternalError : public Error {
 public:
  using Error::Error;
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

  // Seeded random data, the same bytes as `switchyard run` gives an input without a file (so a
  // program can reproduce its runs): floats uniform in [-1, 1), integers uniform in [0, 10)
  // (valid indices and token ids), bools 0/1 with equal odds.
  static Tensor random(DType dtype, std::vector<int64_t> shape, uint64_t seed);

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

// What Model::stats() counts (the rules are those of `switchyard inspect --help`).
struct NodeStats {
  std::string op;  // IR name, e.g. "nn.conv2d"
  std::vector<int64_t> output_shape;
  int64_t flops = 0;
};
// The execution plan of a natively compiled model (a model taken from an artifact).
struct PlanStats {
  int64_t kernel_launches = 0;   // per run
  int64_t distinct_kernels = 0;
  int64_t calls = 0;             // kernel launches and external calls
  int64_t planned_bytes = 0;     // activation memory planned
  int64_t intermediate_bytes = 0;  // of intermediates it holds
};
struct ModelStats {
  std::vector<TensorInfo> inputs, outputs;
  std::map<std::string, int64_t> op_histogram;  // op name -> calls
  int64_t num_ops = 0;
  int64_t params = 0;       // elements of the float constants, without BatchNorm statistics and scalars
  int64_t param_bytes = 0;
  int64_t flops = 0;        // a multiply-add counts 2
  std::vector<NodeStats> nodes;  // every op call, in execution order
  bool compiled = false;    // the model is in natively compiled form (from an artifact): `plan` is set
  PlanStats plan;
};

struct LoadOptions {
  // Input name -> static shape: fixes symbolic dimensions of an ONNX model, or the batch, image
  // size or sequence length of a zoo model.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Input name -> the shape of the data that will be given for it (e.g. an .npy file's): fills
  // the symbolic dimensions of an ONNX input that input_shapes does not name; its fixed
  // dimensions must agree.
  std::map<std::string, std::vector<int64_t>> data_shapes;
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
  // Everything `switchyard inspect` shows: op histogram, per-node FLOPs, and for a model taken
  // from an artifact its execution plan.
  ModelStats stats() const;
  // The model as text IR (what `switchyard print` writes); with weights it parses back (.sy),
  // without them constants show as '...'.
  std::string text(bool weights = true) const;
  // The reference executor (the oracle compiled models are checked against) on the model as it
  // is; inputs in the order of inputs(), outputs in the order of outputs(). threads: 0 = all cores.
  std::vector<Tensor> run_reference(const std::vector<Tensor>& inputs, int threads = 0) const;

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
  // To see the partitioning at work: on_ir(pass, text IR without weights) after each partition
  // pass named by dump_after (a name of partition_pass_names(), or "all").
  std::string dump_after;
  std::function<void(const std::string& pass, const std::string& ir)> on_ir;
  bool keep_generated_c = false;  // keep the native kernels' C source for compile_report()
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
  int64_t intermediate_bytes = 0;   // of intermediates that memory holds
  bool native = false;              // the model has natively compiled kernels
  std::vector<std::string> backend_modules;  // the backends whose built code it holds, sorted
  // What those modules plan for their own intermediates (beside activation_bytes); -1 when a
  // module does not say. Modules may plan at their first run: asked before, they plan now.
  int64_t backend_activation_bytes = 0;
};

// An input for a run and where its value came from.
struct InputValue {
  std::string name;
  std::string source;  // the .npy path, or "random"
  Tensor value;
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
  // The same by position (for timing loops, and models whose outputs share a name): inputs in
  // the order of input_names(), outputs in the order of output_names().
  std::vector<Tensor> run_ordered(const std::vector<Tensor>& inputs, int threads = 0) const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;  // may repeat a name

  // Inputs for a run in input_names() order, as `switchyard run` makes them: `files` maps input
  // names to .npy files (checked against the model's dtypes and shapes; a name that is no input
  // is refused), every other input gets Tensor::random(dtype, shape, seed + its index).
  std::vector<InputValue> prepare_inputs(const std::map<std::string, std::string>& files, uint64_t seed) const;

  // The compiled graph as a Model (for stats() and text()): partitioned and, for cpu targets,
  // in fused form.
  Model model() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
  friend struct Access;
};

SWITCHYARD_API Compiled compile(const Model& model, const CompileOptions& opts = {});

// What the tuner reports while it works (tune_in_process): after each candidate, and at each
// task's start and end.
struct TuneProgress {
  int task = 0, tasks = 0;        // 1-based index of the task (a distinct kernel) being tuned, of how many
  int trial = 0, trials = 0;      // candidates measured in this task, of at most how many
  int total_trials_done = 0, total_trials = 0;
  double elapsed_s = 0, eta_s = 0;
  std::string description;        // of the task's kernel ("conv2d 1x64x56x56 ...")
  std::string op;                 // its anchor op
  int uses = 0;                   // its calls per run
  int64_t flops = 0;              // of one call
  double best_ms = 0;             // best candidate of this task so far (0: none)
  std::string best;               // "impl knobs"
  double default_ms = 0;          // at a task's end: the default's time (0: unknown)
  bool task_done = false;
  double busy_cpus = 0;           // at a task's end: CPUs other processes took while it was timed, when too many
};

struct TuneOptions {
  std::string target = "cpu";
  int trials = 12;              // candidates per kernel at most
  double time_budget_s = 840;   // no candidate is started after this
  bool externs = true;          // false: the libraries' implementations are not candidates
  int threads = 0;              // threads a candidate runs on (0: the target's cores)
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::string search = "guided";  // "guided" or "random"
  int shard = 1, shards = 1;      // tune only shard `shard` of `shards` (1-based; merge_records joins them)
  double timeout_s = 120;         // per candidate, its build included, before it is killed
  // After a run that tuned kernels: the model timed end to end with the records' choices, as
  // without records and (where timed) keeping layouts; another way that beats the records' by
  // more than 2%, twice in a row, is marked in the records and compile follows it.
  bool model_check = true;
  // Kernels timed while other processes kept the CPUs busy (more than a quarter of a CPU on
  // average) are marked in the records and timed again by the next run; true: kept as tuned.
  bool allow_busy = false;
  // tune_in_process only: called once the model is loaded, before the first task; then progress.
  std::function<void()> on_start;
  std::function<void(const TuneProgress&)> progress;
};

// What a tuning run did.
struct TuneResult {
  int tasks = 0;              // kernels with something to choose (in this shard)
  int skipped_tuned = 0;      // already in the records
  int tuned = 0;
  int not_reached = 0;        // left when the time budget ran out
  int nothing_to_choose = 0;  // one implementation, no knobs
  int reference_failed = 0;   // skipped: the reference executor could not run them
  int partial_lines = 0;      // a cut-off last line of the records file, dropped
  int superseded = 0;         // older records of kernels tuned again, dropped from the file
  int busy = 0;               // kernels timed while other processes kept the CPUs busy (see allow_busy)
  double busy_cpus_max = 0;   // the most CPUs other processes took while one of them was timed
  int candidates = 0, wrong = 0, crashed = 0, build_failed = 0, cut = 0, timed_out = 0;
  double seconds = 0;
  std::vector<std::string> failures;  // "task: impl knobs: outcome: message"
  // The end-to-end check after a run that tuned kernels (TuneOptions::model_check): the model's
  // times with the records' choices, as without records and keeping layouts, and what was
  // marked; "" when it did not run.
  std::string layouts;
};

// Measures the implementations and knobs of every native kernel of `model` (a path or
// "zoo:NAME") and appends the records to `records` (resumed from it: tuned kernels are
// skipped); compile with CompileOptions::records = records to use them. Runs `switchyard tune`
// (installed beside the library) in a child process, since the tuner forks a process per
// candidate, which a program whose OpenMP threads have started cannot do safely. Returns its
// summary line ("tuned 3 of 4 tasks in 0:12 ...").
SWITCHYARD_API std::string tune(const std::string& model, const std::string& records, const TuneOptions& opts = {});

// The same in this process (what `switchyard tune` runs): loads `model` (a path, "zoo:NAME" or
// an artifact) and tunes it, reporting through opts.on_start and opts.progress. The tuner forks
// a process per candidate, so call it only in a process whose OpenMP threads have not started
// (before any compile or run; it keeps this process to one OpenMP thread itself), and one at a time.
SWITCHYARD_API TuneResult tune_in_process(const std::string& model, const std::string& records,
                                          const TuneOptions& opts = {});

// Merges tuning records files (e.g. the shards of a tuning run) into `output`, keeping the best
// record per workload, target and implementation.
struct MergeResult {
  int64_t read = 0;    // records in the inputs
  int64_t merged = 0;  // records written
};
SWITCHYARD_API MergeResult merge_records(const std::vector<std::string>& inputs, const std::string& output);

// The libraries whose implementations the native kernels may call (tuning candidates), sorted.
SWITCHYARD_API std::vector<std::string> extern_libraries();

// The names of the external libraries built in (what CompileOptions::backends accepts).
SWITCHYARD_API std::vector<std::string> available_backends();

// The same with what each is, for listings.
struct BackendInfo {
  std::string name;
  std::string description;
  int64_t composite_patterns = 0;  // fused patterns it claims as one unit
};
SWITCHYARD_API std::vector<BackendInfo> backend_infos();

// The built-in models, loadable as Model::load("zoo:" + name); random weights, deterministic.
struct ZooModel {
  std::string name;  // "resnet50"
  std::string description;
};
SWITCHYARD_API std::vector<ZooModel> zoo_models();

// An ONNX file's graph inputs (initializers aside) and outputs as it declares them, each
// dimension a number or its symbol ("N"; "?" when unnamed): what a model with dynamic shapes,
// which Model::load refuses without them, needs LoadOptions::input_shapes for.
struct DeclaredTensor {
  std::string name;
  std::string dtype;              // "float32", ...; ONNX's name for a type Switchyard does not take
  std::vector<std::string> dims;  // empty with has_shape false: no shape declared
  bool has_shape = false;
  bool is_static = false;         // every dimension a number
};
struct DeclaredInterface {
  std::vector<DeclaredTensor> inputs, outputs;
};
SWITCHYARD_API DeclaredInterface onnx_interface(const std::string& path);

// Whether a file is a compiled artifact (Compiled::load) rather than a model (Model::load).
SWITCHYARD_API bool is_artifact(const std::string& path);

// The command line's "NAME=1,3,224,224" (an input's static shape) and "NAME=FILE.npy" (an
// input's value), for programs that take the same syntax; Error quoting the bad text.
SWITCHYARD_API std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& text);
SWITCHYARD_API std::pair<std::string, std::string> parse_input_file(const std::string& text);

// Statistics of repeated timings (milliseconds).
struct LatencyStats {
  double median = 0, min = 0, max = 0, mean = 0;
  double p90 = 0;  // nearest-rank 90th percentile
  int runs = 0;
};
SWITCHYARD_API LatencyStats latency_stats(std::vector<double> ms);

// A look at an output's values.
struct TensorSummary {
  std::vector<double> first;          // up to 6 leading values
  double min = 0, max = 0, mean = 0;  // over the finite values (0 if none)
  int64_t nonfinite = 0;              // NaN or infinite values
};
SWITCHYARD_API TensorSummary summarize(const Tensor& t);
// "(1, 1000) float32  min -2.31  max 3.07  mean 0.012  [0.52, -1.1, ...]"
SWITCHYARD_API std::string summary_line(const Tensor& t);
// "(1, 3, 224, 224)"; a rank-1 shape is "(5,)".
SWITCHYARD_API std::string shape_str(const std::vector<int64_t>& shape);
// File names (without .npy) for outputs: unsafe characters become '_' ("logits/0:0" ->
// "logits_0_0"), later duplicates get "_2", "_3", ...
SWITCHYARD_API std::vector<std::string> output_file_stems(const std::vector<std::string>& names);
// The worst over the outputs of max |a - b| / max |b| (max |a - b| when b is all zero): the check
// of a compiled model against Model::run_reference. Infinite when the outputs differ in number,
// shape or dtype, or when a NaN or infinity of one is not in the other (a NaN is never hidden).
SWITCHYARD_API double relative_error(const std::vector<Tensor>& a, const std::vector<Tensor>& b);

}  // namespace switchyard
