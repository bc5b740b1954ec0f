// C source -> shared library (the system C compiler), and the runtime module that dlopens it.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/c_source/c_source.h"

namespace sy::backends::c_source {

namespace {

namespace fs = std::filesystem;

// A private directory under $TMPDIR (or /tmp), removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sy_c_source_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("c_source: cannot create a temporary directory in " + fs::temp_directory_path().string());
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f.flush()) throw Error("c_source: cannot write " + p.string());
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

}  // namespace

std::string compile_shared_library(const std::string& source, const std::vector<std::string>& target_flags) {
  const char* env = getenv("CC");
  const std::string cc = env && *env ? env : "cc";
  TempDir dir;
  write_file(dir.path / "kernels.c", source);
  // -fno-math-errno: sqrtf and friends become instructions (we never read errno); no -ffast-math,
  // NaN and infinity behave as in the reference. OpenMP: libgomp is already in the process.
  std::string isa;
  for (const auto& f : target_flags) isa += " " + f;  // the target's -march/-m flags: no -march=native
  const std::string cmd = cc + " -O3" + isa + " -fno-math-errno -fPIC -shared -fopenmp -o '" + (dir.path / "kernels.so").string() +
                          "' '" + (dir.path / "kernels.c").string() + "' -lm 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw Error("c_source: cannot start the C compiler '" + cc + "'");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == 127)
    throw Error("c_source: no C compiler: '" + cc + "' could not be run (set CC to choose one; it is needed to "
                "compile a model, not to load a compiled artifact)" + (out.empty() ? "" : ": " + out));
  if (WEXITSTATUS(status) != 0)
    throw Error("c_source: the C compiler failed (" + cc + ", exit " + std::to_string(WEXITSTATUS(status)) + "):\n" + out);
  return read_file(dir.path / "kernels.so");
}

CModule::CModule(Generated code, std::string library) : code_(std::move(code)), library_(std::move(library)) {
  // dlopen needs a file: write a private copy, open it, and delete it at once (the mapping stays).
  {
    TempDir dir;
    const fs::path so = dir.path / "kernels.so";
    write_file(so, library_);
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle_) throw Error(std::string("c_source: cannot load the compiled library: ") + dlerror());
  // The library must have been built for exactly these functions.
  auto* sym = static_cast<const char*>(dlsym(handle_, "sy_abi"));
  const std::string abi = sym ? sym : "no signature";
  if (abi != code_.abi) {
    dlclose(handle_);
    throw Error("c_source: the library does not match its external functions (expected '" + code_.abi +
                "', library has '" + abi + "')");
  }
  for (const FunctionInfo& f : code_.functions) {
    auto fn = reinterpret_cast<Fn>(dlsym(handle_, f.c_name.c_str()));
    SY_CHECK(fn) << "c_source: " << f.c_name << " missing from a library whose signature matched";
    fns_.push_back(fn);
  }
}

CModule::~CModule() {
  if (handle_) dlclose(handle_);
}

std::vector<Tensor> CModule::run(const std::string& symbol, const std::vector<Tensor>& inputs) {
  size_t i = 0;
  while (i < code_.functions.size() && code_.functions[i].symbol != symbol) ++i;
  if (i == code_.functions.size()) throw Error("c_source: no external function '" + symbol + "' in this module");
  const FunctionInfo& f = code_.functions[i];
  if (inputs.size() != f.params.size())
    throw Error("c_source: " + symbol + " takes " + std::to_string(f.params.size()) + " inputs, got " +
                std::to_string(inputs.size()));
  std::vector<const float*> in;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    if (t.dtype() != DType::f32 || t.shape() != f.params[k]->shape)
      throw Error("c_source: " + symbol + " input " + std::to_string(k) + ": expected " + ir::type_str(f.params[k]) +
                  ", got " + std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()));
    in.push_back(static_cast<const float*>(t.raw()));
  }
  for (const Tensor& c : f.constants) in.push_back(static_cast<const float*>(c.raw()));
  std::vector<Tensor> outs;
  std::vector<float*> out;
  for (const ir::Type& t : f.outputs) {
    outs.emplace_back(DType::f32, t->shape);
    out.push_back(static_cast<float*>(outs.back().raw()));
  }
  fns_[i](in.data(), out.data());
  return outs;
}

}  // namespace sy::backends::c_source
