// C code generation from loop IR: one C translation unit per set of functions.
//
// Each function `f(A, B, C)` becomes `int32_t f(void* const* args)` (packed arguments: one data
// pointer per buffer parameter, in order; buffers must not alias) around a static body with
// restrict-qualified typed pointers. Parallel loops become `#pragma omp parallel for`, vectorized
// loops `#pragma omp simd`. Extern calls go through the exported pointer table `sy_extern_ptrs`
// (names in `sy_extern_names`), which the module loader fills. Kernel names and argument counts
// are exported as `sy_kernel_names` / `sy_kernel_num_args`.
#pragma once
#include <string>
#include <vector>

#include "tir/stmt.h"

namespace sy::codegen {

struct CSourceOptions {
  // Arrays up to this many bytes are allocated on the stack, larger ones on the heap.
  int64_t max_stack_bytes = 64 * 1024;
  // Appended verbatim (e.g. C definitions of extern functions).
  std::string extra_source;
};

std::string generate_c(const std::vector<tir::PrimFunc>& funcs, const CSourceOptions& opts = {});

// The same library as up to max_units translation units of about equal size, for compiler
// processes that run at once (compiler.h), and the whole source as generate_c gives it. The first
// unit holds the exported tables and extra_source, each unit the preamble (its helpers are static)
// and whole kernels. A source too small to gain from it is one unit, the whole.
struct CUnits {
  std::string whole;
  std::vector<std::string> units;
};
inline constexpr size_t kMinUnitBytes = 40 * 1024;
// What the native path asks for, whatever the machine's CPUs, so that a library's cache key does
// not depend on them: EfficientNet-B0's kernels (2.2 MB of C) took 62 s as one unit, 58 s as 8
// compiled one after another (GCC's time grows faster than the source), 34 s as 8 on 2 cores,
// 37 s as 16.
inline constexpr int kMaxUnits = 8;
CUnits generate_c_units(const std::vector<tir::PrimFunc>& funcs, const CSourceOptions& opts, int max_units);

// sy::Error unless every kernel name is a C identifier not starting with sy_, and unique (the
// names are exported symbols of the library, whatever generates it).
void check_kernel_names(const std::vector<tir::PrimFunc>& funcs);

// The line of the library's site table (module.h's sy_kernel_sites) that describes stateful
// extern call s of a kernel with these parameters: "func buffer... attrs", each buffer
// PARAM:DTYPE:D0xD1... (PARAM -1 for a kernel temporary), attrs comma-separated integers or "-".
// sy::Error if an attribute is not an integer constant.
std::string stateful_site_line(const tir::Stmt& s, const std::vector<tir::Buffer>& params);

// What a generated kernel returns: 0, or the fault its run raised instead of trapping or reading
// outside a buffer (the preamble's sy_fault, named SY_FAULT_* in the C source).
enum KernelFault : int32_t {
  kKernelOk = 0,
  kFaultIntDivZero = 1,
  kFaultIndexOutOfRange = 2,
  kFaultExtern = 3,
  kFaultCoordinates = 4,  // region coordinates from the data: not finite, or too much work to sample
};
// "integer division or modulo by zero", ... ("failed (code N)" for an unknown code).
std::string kernel_fault_message(int32_t code);

// The C type of a dtype ("float", "int64_t", "bool", ...).
const char* c_type(DType t);

}  // namespace sy::codegen
