// The llvm codegen hook: the kernels' LLVM IR and object file come from libswitchyard_llvm.so
// (llvm_plugin.cpp), loaded on the first build (plugin_abi.h says why); here the object is linked
// into a shared library by lld (no C compiler) and cached by content like the C path's libraries.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <llvm/Config/llvm-config.h>  // the version only: nothing of LLVM is linked here

#include "codegen/c/hooks.h"
#include "codegens/llvm/plugin_abi.h"
#include "support/error.h"
#include "target/host.h"

namespace sy::codegen {

namespace {

namespace fs = std::filesystem;

// The plugin beside the code that holds this function (libswitchyard.so, installed or in the
// build tree's lib/), in the lib/ beside a program's bin/, or where this build tree put it.
llvmgen::PluginEmitFn plugin() {
  static std::once_flag once;
  static llvmgen::PluginEmitFn fn = nullptr;
  static std::string error;
  std::call_once(once, [] {
    std::vector<fs::path> tried;
    auto candidate = [&](const fs::path& dir) {
      const fs::path p = dir / llvmgen::kPluginFile;
      if (std::find(tried.begin(), tried.end(), p) == tried.end()) tried.push_back(p);
    };
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&plugin), &info) && info.dli_fname && *info.dli_fname) {
      std::error_code ec;
      const fs::path self = fs::weakly_canonical(info.dli_fname, ec);
      if (!ec) {
        candidate(self.parent_path());
        candidate(self.parent_path().parent_path() / "lib");
      }
    }
#ifdef SY_LLVM_PLUGIN_BUILD_DIR
    candidate(SY_LLVM_PLUGIN_BUILD_DIR);
#endif
    std::string why, paths;
    for (const fs::path& p : tried) {
      paths += (paths.empty() ? "" : ", ") + p.string();
      std::error_code ec;
      if (!fs::exists(p, ec)) continue;
      // Never closed: the hook calls into it for the rest of the process.
      void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* e = dlerror();
        why = e ? e : "dlopen failed";
        continue;
      }
      fn = reinterpret_cast<llvmgen::PluginEmitFn>(dlsym(h, llvmgen::kPluginEmitSymbol));
      if (fn) return;
      why = p.string() + " has no " + llvmgen::kPluginEmitSymbol;
    }
    error = std::string("llvm codegen: cannot load ") + llvmgen::kPluginFile + " (looked in " + paths + ")" +
            (why.empty() ? "" : ": " + why);
  });
  if (!fn) throw Error(error);
  return fn;
}

// The full path of a shared library of this process (loaded if it is not yet), for the linker:
// the kernels' library names it as needed, so that it loads in any process (Python too, where
// this library's own dependencies are not global).
std::string loaded_library(const char* soname) {
  void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen(soname, RTLD_LAZY);
  if (!h) throw Error(std::string("llvm codegen: cannot find ") + soname + " to link the kernels against");
  link_map* lm = nullptr;
  std::string path;
  if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) path = lm->l_name;
  dlclose(h);
  if (path.empty()) throw Error(std::string("llvm codegen: cannot find the path of ") + soname);
  return path;
}

const std::vector<std::string>& runtime_libraries() {
  static const std::vector<std::string> libs = {loaded_library("libgomp.so.1"), loaded_library("libmvec.so.1"),
                                                loaded_library("libm.so.6"), loaded_library("libc.so.6")};
  return libs;
}

// lld from Debian's lld-14 (or a plain ld.lld); GNU ld if neither is installed.
std::string linker() {
  static const std::string found = [] {
    for (const char* l : {"ld.lld-14", "ld.lld", "ld"}) {
      const char* path = std::getenv("PATH");
      std::stringstream ss(path ? path : "/usr/bin:/bin");
      for (std::string dir; std::getline(ss, dir, ':');)
        if (!dir.empty() && access((fs::path(dir) / l).c_str(), X_OK) == 0) return std::string(l);
    }
    return std::string();
  }();
  if (found.empty()) throw Error("llvm codegen: no linker found (install Debian's lld-14)");
  return found;
}

std::shared_ptr<Module> build_llvm(const std::vector<tir::PrimFunc>& funcs, const BuildOptions& opts) {
  const llvmgen::PluginEmitFn emit = plugin();
  llvmgen::PluginRequest req;
  req.funcs = &funcs;
  req.target = opts.target.value_or(target::host());
  req.max_stack_bytes = opts.source.max_stack_bytes;
  const fs::path dir = opts.compile.cache_dir.empty() ? default_cache_dir() : opts.compile.cache_dir;
  fs::path so;
  req.wants_object = [&](const std::string& ir, const std::string& machine) {
    so = dir / (content_hash(machine + " " + linker() + "\n" + ir) + ".so");
    std::error_code ec;
    return !fs::exists(so, ec);
  };
  llvmgen::PluginResult res;
  emit(req, res);
  if (!res.error.empty()) throw Error(res.error);
  if (!res.object.empty()) {
    const std::string key = so.stem().string();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw Error("codegen: cannot create the cache directory " + dir.string() + ": " + ec.message());
    static std::atomic<int64_t> attempt{0};
    const std::string tag = std::to_string(getpid()) + "-" + std::to_string(attempt++);
    const fs::path o = dir / (key + "-" + tag + ".o"), tmp = dir / (key + ".so.tmp-" + tag),
                   log = dir / (key + ".log-" + tag);
    {
      std::ofstream out(o, std::ios::binary);
      out << res.object;
      if (!out) throw Error("codegen: cannot write " + o.string());
    }
    std::vector<std::string> argv = {linker(), "-shared", "-o", tmp.string(), o.string()};
    for (const auto& l : runtime_libraries()) argv.push_back(l);
    const int rc = run_command(argv, log.string());
    std::ifstream lf(log);
    std::stringstream lines;
    lines << lf.rdbuf();
    fs::remove(o, ec);
    fs::remove(log, ec);
    if (rc != 0) {
      fs::remove(tmp, ec);
      throw Error("llvm codegen: the linker failed (exit " + std::to_string(rc) + "): " + lines.str().substr(0, 600));
    }
    {
      std::ofstream out(dir / (key + ".ll"));
      out << res.ir;
    }
    fs::rename(tmp, so, ec);
    if (ec) throw Error("codegen: cannot move " + tmp.string() + " into the cache: " + ec.message());
  }
  return Module::load(so.string(), opts.externs, std::move(res.ir));
}

}  // namespace

void register_llvm_codegen() {
  CodegenHook h;
  h.description = "LLVM " LLVM_VERSION_STRING ": loop IR to machine code, linked by lld (no C compiler)";
  h.build = build_llvm;
  h.identity = [] { return std::string("LLVM ") + LLVM_VERSION_STRING; };
  register_codegen_hook("llvm", std::move(h));
}

}  // namespace sy::codegen
