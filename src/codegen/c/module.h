// A loaded native module: a shared library of generated kernels, opened with dlopen, whose
// kernels are called with packed arguments (one data pointer per buffer).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sy::codegen {

using PackedKernel = int32_t (*)(void* const* args);
// Extern functions by name, for extern stages; names not given are looked up in the library
// itself, then in the process (dlsym RTLD_DEFAULT).
using ExternSymbols = std::map<std::string, void*>;

// A stateful extern call site of a kernel (include/switchyard/extern_abi.h), as the generated
// library describes it: the kernel's state j belongs to its site j.
struct ExternSite {
  std::string func;  // the stateful extern's name
  struct Buffer {
    int param = -1;  // the kernel argument passed (index into its args), -1 for a kernel temporary
    int dtype = 0;   // sy::DType
    std::vector<int64_t> shape;
  };
  std::vector<Buffer> buffers;  // inputs..., output
  std::vector<int64_t> attrs;
};

class Module {
 public:
  // Opens the library at path (kept open until the module is destroyed). dlopen shares one copy
  // per path: two modules of the same path share its extern table (the last load fills it).
  static std::shared_ptr<Module> load(const std::string& so_path, const ExternSymbols& externs = {},
                                      std::string generated_c = {});
  // Writes the library bytes to a temporary file and opens it (for artifacts that embed the library).
  static std::shared_ptr<Module> load_from_bytes(const std::string& so_bytes, const ExternSymbols& externs = {});
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::vector<std::string>& kernel_names() const { return kernel_names_; }
  bool has_kernel(const std::string& name) const;
  // The kernel's entry point; sy::Error if there is no such kernel.
  PackedKernel get(const std::string& name) const;
  int num_args(const std::string& name) const;
  // The kernel's stateful extern sites: their states follow its num_args buffers in args.
  const std::vector<ExternSite>& sites(const std::string& name) const;
  // Calls a kernel without stateful sites; sy::Error if the argument count is wrong, the kernel
  // has sites, or it reports failure.
  void call(const std::string& name, const std::vector<void*>& args) const;

  const std::string& generated_c() const { return generated_c_; }  // empty if loaded from bytes
  std::string so_bytes() const;                              // the library file's bytes
  const std::string& path() const { return path_; }

 private:
  Module() = default;
  void open(const ExternSymbols& externs);
  void* handle_ = nullptr;
  std::string path_;
  bool temp_file_ = false;
  std::string generated_c_;
  std::vector<std::string> kernel_names_;
  std::vector<int> num_args_;
  std::vector<std::vector<ExternSite>> sites_;
};

}  // namespace sy::codegen
