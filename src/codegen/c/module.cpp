#include "codegen/c/module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace sy::codegen {

namespace {

template <typename T>
T* symbol(void* h, const char* name, const std::string& path) {
  void* p = dlsym(h, name);
  if (!p) throw Error("codegen: " + path + " is not a Switchyard module (no symbol " + name + ")");
  return static_cast<T*>(p);
}

}  // namespace

std::shared_ptr<Module> Module::load(const std::string& so_path, const ExternSymbols& externs, std::string generated_c) {
  std::shared_ptr<Module> m(new Module());
  m->path_ = so_path;
  m->generated_c_ = std::move(generated_c);
  m->open(externs);
  return m;
}

std::shared_ptr<Module> Module::load_from_bytes(const std::string& so_bytes, const ExternSymbols& externs) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "switchyard-module-XXXXXX.so").string();
  int fd = mkstemps(tmpl.data(), 3);
  if (fd < 0) throw Error("codegen: cannot create a temporary file for a module");
  const char* p = so_bytes.data();
  size_t left = so_bytes.size();
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w <= 0) {
      close(fd);
      unlink(tmpl.c_str());
      throw Error("codegen: cannot write a temporary module file " + tmpl);
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  close(fd);
  std::shared_ptr<Module> m(new Module());
  m->path_ = tmpl;
  m->temp_file_ = true;
  m->open(externs);
  return m;
}

void Module::open(const ExternSymbols& externs) {
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* err = dlerror();
    throw Error("codegen: cannot load module " + path_ + ": " + (err ? err : "unknown dlopen error"));
  }
  const int32_t nk = *symbol<const int32_t>(handle_, "sy_kernel_count", path_);
  auto* names = symbol<const char* const>(handle_, "sy_kernel_names", path_);
  auto* nargs = symbol<const int32_t>(handle_, "sy_kernel_num_args", path_);
  for (int32_t i = 0; i < nk; ++i) {
    kernel_names_.push_back(names[i]);
    num_args_.push_back(nargs[i]);
  }
  const int32_t ne = *symbol<const int32_t>(handle_, "sy_extern_count", path_);
  auto* enames = symbol<const char* const>(handle_, "sy_extern_names", path_);
  auto* eptrs = symbol<void*>(handle_, "sy_extern_ptrs", path_);
  for (int32_t i = 0; i < ne; ++i) {
    const std::string n = enames[i];
    void* p = nullptr;
    if (auto it = externs.find(n); it != externs.end()) p = it->second;
    if (!p) p = dlsym(handle_, n.c_str());
    if (!p) p = dlsym(RTLD_DEFAULT, n.c_str());
    if (!p) throw Error("codegen: extern function '" + n + "' used by module " + path_ + " is not defined (give it in the extern symbols or link it into the process)");
    eptrs[i] = p;
  }
}

Module::~Module() {
  if (handle_) dlclose(handle_);
  if (temp_file_) unlink(path_.c_str());
}

bool Module::has_kernel(const std::string& name) const {
  for (const auto& n : kernel_names_)
    if (n == name) return true;
  return false;
}

int Module::num_args(const std::string& name) const {
  for (size_t i = 0; i < kernel_names_.size(); ++i)
    if (kernel_names_[i] == name) return num_args_[i];
  throw Error("codegen: module " + path_ + " has no kernel " + name);
}

PackedKernel Module::get(const std::string& name) const {
  if (!has_kernel(name)) throw Error("codegen: module " + path_ + " has no kernel " + name);
  void* p = dlsym(handle_, name.c_str());
  if (!p) throw Error("codegen: kernel " + name + " has no entry point in " + path_);
  return reinterpret_cast<PackedKernel>(p);
}

void Module::call(const std::string& name, const std::vector<void*>& args) const {
  const int n = num_args(name);
  if (static_cast<int>(args.size()) != n)
    throw Error("codegen: kernel " + name + " takes " + std::to_string(n) + " buffers, got " + std::to_string(args.size()));
  const int32_t rc = get(name)(args.data());
  if (rc != 0) throw Error("codegen: kernel " + name + " failed with code " + std::to_string(rc));
}

std::string Module::so_bytes() const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw Error("codegen: cannot read module " + path_);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace sy::codegen
