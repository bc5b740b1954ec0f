#include "codegen/c/module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>
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

// The site table's lines (c_generator.cpp's stateful_call writes them).
std::vector<ExternSite> parse_sites(const char* text, const std::string& path) {
  std::vector<ExternSite> out;
  if (!text) return out;
  auto bad = [&](const std::string& line) {
    return Error("codegen: module " + path + " has a malformed extern site '" + line + "'");
  };
  auto ints = [&](const std::string& s, char sep, const std::string& line) {
    std::vector<int64_t> v;
    if (s.empty() || s == "-") return v;
    std::istringstream is(s);
    std::string tok;
    while (std::getline(is, tok, sep)) {
      char* end = nullptr;
      errno = 0;
      const long long x = std::strtoll(tok.c_str(), &end, 10);
      if (tok.empty() || *end || errno == ERANGE) throw bad(line);
      v.push_back(x);
    }
    return v;
  };
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream is(line);
    std::vector<std::string> words;
    for (std::string w; is >> w;) words.push_back(w);
    if (words.size() < 3) throw bad(line);
    ExternSite s;
    s.func = words[0];
    for (size_t i = 1; i + 1 < words.size(); ++i) {
      const size_t a = words[i].find(':'), b = words[i].find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) throw bad(line);
      std::vector<int64_t> p = ints(words[i].substr(0, a), ',', line), d = ints(words[i].substr(a + 1, b - a - 1), ',', line);
      if (p.size() != 1 || d.size() != 1 || p[0] < -1 || p[0] > (1 << 20) || d[0] < 0 || d[0] > 255) throw bad(line);
      s.buffers.push_back({static_cast<int>(p[0]), static_cast<int>(d[0]), ints(words[i].substr(b + 1), 'x', line)});
    }
    s.attrs = ints(words.back(), ',', line);
    out.push_back(std::move(s));
  }
  return out;
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
  // Libraries built before stateful externs have no site table: no kernel has sites.
  auto* site_text = reinterpret_cast<const char* const*>(dlsym(handle_, "sy_kernel_sites"));
  for (int32_t i = 0; i < nk; ++i) {
    kernel_names_.push_back(names[i]);
    num_args_.push_back(nargs[i]);
    sites_.push_back(site_text ? parse_sites(site_text[i], path_) : std::vector<ExternSite>{});
  }
  // Stateful externs left unresolved here are reported by whoever makes their states, naming
  // the extern and the kernel (e.g. a library that needs an extern this build lacks).
  std::set<std::string> stateful;
  for (const auto& sites : sites_)
    for (const ExternSite& s : sites) stateful.insert(s.func);
  const int32_t ne = *symbol<const int32_t>(handle_, "sy_extern_count", path_);
  auto* enames = symbol<const char* const>(handle_, "sy_extern_names", path_);
  auto* eptrs = symbol<void*>(handle_, "sy_extern_ptrs", path_);
  for (int32_t i = 0; i < ne; ++i) {
    const std::string n = enames[i];
    void* p = nullptr;
    if (auto it = externs.find(n); it != externs.end()) p = it->second;
    if (!p) p = dlsym(handle_, n.c_str());
    if (!p) p = dlsym(RTLD_DEFAULT, n.c_str());
    if (!p && !stateful.count(n))
      throw Error("codegen: extern function '" + n + "' used by module " + path_ +
                  " is not defined (give it in the extern symbols or link it into the process)");
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

const std::vector<ExternSite>& Module::sites(const std::string& name) const {
  for (size_t i = 0; i < kernel_names_.size(); ++i)
    if (kernel_names_[i] == name) return sites_[i];
  throw Error("codegen: module " + path_ + " has no kernel " + name);
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
  if (!sites(name).empty()) throw Error("codegen: kernel " + name + " has stateful extern calls: run it from an executable");
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
