// Runs ONNX's node conformance cases (model.onnx + test_data_set_*/{input,output}_*.pb) through
// the importer and the reference executor and compares with the expected outputs.
//
// Each case runs in a forked child so that a crash or a hang in one case is reported as that
// case's failure instead of ending the run. An import error that says "unsupported" is a skip.
// A case whose shape-like inputs (shape, axes, pads, k, ...) are graph inputs is retried with its
// inputs bound to their values (static shapes are a design decision of Switchyard).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "target/host.h"
#include "backends/reference/executor.h"
#include "backends/backend.h"
#include "native/compile.h"
#include "partition/pipeline.h"
#include "runtime/compiled_model.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/tensor_proto.h"
#include "onnx/onnx.pb.h"

namespace fs = std::filesystem;
using sy::Tensor;

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-5;
constexpr unsigned kCaseTimeoutSeconds = 120;

enum class Outcome { Pass, Fail, Skip };

struct CaseResult {
  Outcome outcome = Outcome::Fail;
  std::string detail;  // failure reason or skip reason
  bool frozen = false;  // passed only with inputs bound as constants
  bool offloaded = false;  // --backend: the backend took at least one region of the case
};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

Tensor read_tensor_pb(const fs::path& p) {
  ::onnx::TensorProto proto;
  std::string bytes = read_file(p);
  if (!proto.ParseFromString(bytes)) throw sy::Error(p.filename().string() + ": not a TensorProto (sequence/optional/map value?)");
  return sy::onnx::tensor_from_proto(proto, p.parent_path().string(), p.filename().string());
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

bool is_skip_message(const std::string& msg) { return msg.find("unsupported") != std::string::npos; }

// A short, groupable reason: "unsupported ONNX ops: If", "unsupported dtype float16", ...
std::string skip_reason(const std::string& msg) {
  size_t at = msg.find("unsupported");
  std::string r = msg.substr(at);
  if (r.rfind("unsupported ONNX ops: ", 0) == 0) {
    // Keep the op names, drop the node lists and the opset note.
    std::string ops, rest = r.substr(std::strlen("unsupported ONNX ops: "));
    int depth = 0;
    for (char ch : rest) {
      if (ch == '(') ++depth;
      else if (ch == ')') --depth;
      else if (depth == 0) ops += ch;
    }
    while (!ops.empty() && ops.back() == ' ') ops.pop_back();
    return "unsupported ONNX ops: " + ops;
  }
  if (r.rfind("unsupported dtype ", 0) == 0) {
    size_t end = r.find_first_of(" (", std::strlen("unsupported dtype "));
    return r.substr(0, end);
  }
  size_t paren = r.find(" (");
  return paren == std::string::npos ? r : r.substr(0, paren);
}

std::string compare(const Tensor& got, const Tensor& want, const std::string& name) {
  std::ostringstream os;
  if (got.dtype() != want.dtype())
    return name + ": dtype " + std::string(sy::dtype_name(got.dtype())) + ", expected " + std::string(sy::dtype_name(want.dtype()));
  if (got.shape() != want.shape())
    return name + ": shape " + sy::shape_str(got.shape()) + ", expected " + sy::shape_str(want.shape());
  bool fp = sy::is_float(want.dtype());
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.get_as_double(i), w = want.get_as_double(i);
    bool ok;
    if (!fp) ok = got.get_as_int(i) == want.get_as_int(i);
    else if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::abs(g - w) <= kAtol + kRtol * std::abs(w);
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
      if (fp && !std::isnan(g)) worst = std::max(worst, std::abs(g - w));
    }
  }
  if (bad == 0) return "";
  os << name << ": " << bad << " of " << want.numel() << " elements differ; first at flat index " << first << ": got "
     << got.get_as_double(first) << ", expected " << want.get_as_double(first);
  if (fp) os << " (max abs diff " << worst << ")";
  return os.str();
}

// --executor native: the case goes through fusion, topi, the loop IR and the C compiler.
bool g_native = false;
// --backend NAME: partitioned for that BYOC backend first (what it claims runs in its module,
// the rest natively), as `switchyard run --backends NAME`.
const sy::backends::Backend* g_backend = nullptr;
bool g_offloaded = false;

sy::Result<std::vector<Tensor>> run_native(const sy::ir::Module& m, const std::vector<Tensor>& args) {
  return sy::catch_errors([&] {
    if (!g_backend) {
      sy::native::Compiled c = sy::native::compile_native(m);
      return c.executable->run(args, 1, nullptr);
    }
    sy::partition::PartitionOptions opts{{g_backend}, {}, {}, ""};
    sy::runtime::CompiledModel cm = sy::runtime::build_modules(sy::partition::partition_module(m, opts).module, {g_backend}, sy::target::host());
    sy::native::CompileOptions no;
    no.lowering_hooks = sy::runtime::lowering_hooks({g_backend});  // a backend with a target hook
    sy::native::Compiled c = sy::native::compile_native(cm.module, no);
    g_offloaded = !cm.modules.empty();
    for (const sy::strategy::Choice& ch : c.choices) g_offloaded |= ch.implementation == g_backend->name();
    cm.module = c.fused;
    cm.native = c.executable;
    return cm.run(args, 1);
  });
}

CaseResult run_case(const fs::path& dir) {
  CaseResult res;
  fs::path model_path = dir / "model.onnx";
  ::onnx::ModelProto model;
  if (!model.ParseFromString(read_file(model_path))) {
    res.detail = "cannot parse model.onnx";
    return res;
  }
  std::vector<std::string> input_names;
  {
    std::vector<std::string> inits;
    for (const auto& i : model.graph().initializer()) inits.push_back(i.name());
    for (const auto& vi : model.graph().input())
      if (std::find(inits.begin(), inits.end(), vi.name()) == inits.end()) input_names.push_back(vi.name());
  }

  std::vector<fs::path> data_sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) data_sets.push_back(e.path());
  std::sort(data_sets.begin(), data_sets.end());
  if (data_sets.empty()) {
    res.detail = "no test_data_set_* directory";
    return res;
  }

  for (const auto& vi : model.graph().input())
    if (vi.has_type() && !vi.type().has_tensor_type()) {
      // The importer rejects these anyway; reading their .pb files as tensors would be wrong.
      res.outcome = Outcome::Skip;
      res.detail = "unsupported non-tensor graph input (sequence/optional/map)";
      return res;
    }
  for (const auto& vi : model.graph().output())
    if (vi.has_type() && !vi.type().has_tensor_type()) {
      res.outcome = Outcome::Skip;
      res.detail = "unsupported non-tensor graph output (sequence/optional/map)";
      return res;
    }

  for (const fs::path& ds : data_sets) {
    std::vector<Tensor> inputs, expected;
    try {
      for (size_t i = 0; i < input_names.size(); ++i) inputs.push_back(read_tensor_pb(ds / ("input_" + std::to_string(i) + ".pb")));
      for (int i = 0; i < model.graph().output_size(); ++i)
        expected.push_back(read_tensor_pb(ds / ("output_" + std::to_string(i) + ".pb")));
    } catch (const sy::Error& e) {
      std::string msg = e.what();
      res.outcome = is_skip_message(msg) ? Outcome::Skip : Outcome::Fail;
      res.detail = is_skip_message(msg) ? skip_reason(msg) : "reading test data: " + msg;
      if (!is_skip_message(msg) && msg.find("not a TensorProto") != std::string::npos) {
        res.outcome = Outcome::Skip;
        res.detail = "unsupported value kind (sequence/optional/map)";
      }
      return res;
    }

    sy::onnx::ImportOptions opts;
    for (size_t i = 0; i < input_names.size(); ++i) opts.input_shapes[input_names[i]] = inputs[i].shape();
    auto mod = sy::onnx::import_file(model_path.string(), opts);
    // Inputs that feed static arguments: bind the integer inputs first, then all of them.
    for (int attempt = 0; attempt < 2 && !mod.is_ok() &&
                          mod.status().message().find("is not a constant") != std::string::npos;
         ++attempt) {
      for (size_t i = 0; i < input_names.size(); ++i)
        if (attempt == 1 || sy::is_integer(inputs[i].dtype())) opts.input_values[input_names[i]] = inputs[i];
      mod = sy::onnx::import_file(model_path.string(), opts);
      res.frozen = true;
    }
    if (!mod.is_ok()) {
      std::string msg = first_line(mod.status().message());
      if (is_skip_message(msg)) {
        res.outcome = Outcome::Skip;
        res.detail = skip_reason(msg);
      } else {
        res.detail = "import: " + msg;
      }
      return res;
    }
    std::vector<Tensor> args;
    for (const auto& p : mod->main().params) {
      const auto* v = p->as<sy::ir::VarNode>();
      auto it = std::find(input_names.begin(), input_names.end(), v->name);
      if (it == input_names.end()) {
        res.detail = "parameter '" + v->name + "' is not a graph input";
        return res;
      }
      args.push_back(inputs[static_cast<size_t>(it - input_names.begin())]);
    }
    sy::Result<std::vector<Tensor>> outs = g_native ? run_native(*mod, args) : sy::reference::run_module(*mod, args);
    if (!outs.is_ok()) {
      res.detail = "run: " + first_line(outs.status().message());
      return res;
    }
    if (outs->size() != expected.size()) {
      res.detail = "got " + std::to_string(outs->size()) + " outputs, expected " + std::to_string(expected.size());
      return res;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string diff = compare((*outs)[i], expected[i], "output '" + model.graph().output(static_cast<int>(i)).name() + "'");
      if (!diff.empty()) {
        res.detail = ds.filename().string() + ": " + diff;
        return res;
      }
    }
  }
  res.outcome = Outcome::Pass;
  res.offloaded = g_offloaded;
  return res;
}

// Runs one case in a child process; the child writes "<outcome>\t<flags>\t<detail>" to a pipe
// (flags: 1 frozen, 2 offloaded).
CaseResult run_case_isolated(const fs::path& dir) {
  int fds[2];
  if (pipe(fds) != 0) return run_case(dir);
  std::cout.flush();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(kCaseTimeoutSeconds);
    CaseResult r;
    try {
      r = run_case(dir);
    } catch (const std::exception& e) {
      r.outcome = Outcome::Fail;
      r.detail = std::string("uncaught exception: ") + e.what();
    }
    const int flags = (r.frozen ? 1 : 0) | (r.offloaded ? 2 : 0);
    std::string msg = std::to_string(static_cast<int>(r.outcome)) + "\t" + std::to_string(flags) + "\t" + r.detail;
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t n = write(fds[1], msg.data() + off, msg.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CaseResult r;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    r.detail = sig == SIGALRM ? "timed out after " + std::to_string(kCaseTimeoutSeconds) + " s"
                              : "crashed with signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    return r;
  }
  size_t t1 = out.find('\t'), t2 = t1 == std::string::npos ? t1 : out.find('\t', t1 + 1);
  if (t2 == std::string::npos) {
    r.detail = "child exited without a result (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    return r;
  }
  r.outcome = static_cast<Outcome>(std::stoi(out.substr(0, t1)));
  const int flags = std::stoi(out.substr(t1 + 1, t2 - t1 - 1));
  r.frozen = flags & 1;
  r.offloaded = flags & 2;
  r.detail = out.substr(t2 + 1);
  return r;
}

int usage() {
  std::cerr << "usage: sy_conformance CASES_DIR [--filter SUBSTRING]... [--executor reference|native] [--backend NAME]"
               " [--verbose] [--no-fork]\n"
               "Runs ONNX node conformance cases (as written by gen_onnx_node_cases.py).\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root;
  std::vector<std::string> filters;
  bool verbose = false, isolate = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) filters.push_back(argv[++i]);
    else if (a == "--verbose" || a == "-v") verbose = true;
    else if (a == "--no-fork") isolate = false;
    else if (a == "--executor" && i + 1 < argc) {
      std::string e = argv[++i];
      if (e != "native" && e != "reference") return usage();
      g_native = e == "native";
    } else if (a == "--backend" && i + 1 < argc) {
      g_backend = sy::backends::BackendRegistry::global().find(argv[++i]);
      if (!g_backend) {
        std::cerr << "sy_conformance: error: no backend '" << argv[i] << "' in this build\n";
        return 2;
      }
      g_native = true;
    }
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    }
    else if (!a.empty() && a[0] != '-' && root.empty()) root = a;
    else return usage();
  }
  if (root.empty()) return usage();
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    std::cerr << "sy_conformance: error: " << root << " is not a directory\n";
    return 2;
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) {
      std::string name = e.path().filename().string();
      bool keep = filters.empty();
      for (const auto& f : filters) keep = keep || name.find(f) != std::string::npos;
      if (keep) cases.push_back(e.path());
    }
  std::sort(cases.begin(), cases.end());

  int passed = 0, failed = 0, skipped = 0, frozen = 0, offloaded = 0;
  std::map<std::string, int> reasons;
  for (const auto& dir : cases) {
    std::string name = dir.filename().string();
    CaseResult r = isolate ? run_case_isolated(dir) : run_case(dir);
    switch (r.outcome) {
      case Outcome::Pass:
        ++passed;
        frozen += r.frozen;
        offloaded += r.offloaded;
        if (verbose) std::cout << "PASS " << name << (r.frozen ? " (inputs bound as constants)" : "") << "\n";
        break;
      case Outcome::Fail:
        ++failed;
        std::cout << "FAIL " << name << ": " << r.detail << "\n";
        break;
      case Outcome::Skip:
        ++skipped;
        ++reasons[r.detail];
        if (verbose) std::cout << "SKIP " << name << ": " << r.detail << "\n";
        break;
    }
  }
  std::vector<std::pair<int, std::string>> hist;
  for (const auto& [reason, n] : reasons) hist.emplace_back(n, reason);
  std::sort(hist.begin(), hist.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (!hist.empty()) std::cout << "skip reasons:\n";
  for (const auto& [n, reason] : hist) std::cout << "  " << n << "  " << reason << "\n";
  std::cout << "conformance: " << passed << " passed, " << failed << " failed, " << skipped
            << " skipped (unsupported)";
  if (frozen) std::cout << "; " << frozen << " of the passes bound shape-like graph inputs as constants";
  if (g_backend) std::cout << "; " << g_backend->name() << " ran a region in " << offloaded << " of the passes";
  std::cout << "\n";
  return failed ? 1 : 0;
}
