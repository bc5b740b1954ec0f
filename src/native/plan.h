// The executable plan of a fused module: which kernel runs when, on which buffers, and the static
// memory plan (storage reuse) for intermediates. Computed from the fused module alone, so an
// artifact stores the module and the kernels' library, and the plan is recomputed at load.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/module.h"
#include "support/tensor.h"

namespace sy::native {

// Where a value lives at run time.
enum class ValueKind {
  Input,      // @main parameter `index`
  Constant,   // constants[index]
  Storage,    // arena + offset (a planned intermediate)
  Output,     // a fresh tensor per run, returned to the caller (outputs[index])
  External,   // result `index` of external call `call` (a tensor the backend module returns)
};

struct Value {
  ValueKind kind = ValueKind::Storage;
  int index = 0;
  int call = -1;        // External: the producing call
  int64_t offset = 0;   // Storage: byte offset in the arena
  DType dtype = DType::f32;
  Shape shape;
  int alias_of = -1;    // a reshape view of value alias_of (same bytes; kind/offset unused)
  int64_t nbytes() const;
};

struct Call {
  bool external = false;     // a BYOC function (runtime module) instead of a generated kernel
  bool fallback = false;     // run by the reference kernels (the group has no native implementation)
  std::string kernel;        // kernel symbol, or the external function's symbol
  int function = -1;         // kernels: index into Plan::kernels (unique fused functions)
  std::vector<int> inputs;   // value ids
  std::vector<int> outputs;  // value ids
  // A concatenation whose inputs were planned inside its result (each producer writes its part
  // in place): nothing to run. Its kernel is still built (another call of it may copy).
  bool elided = false;
};

struct Plan {
  std::vector<ir::Expr> kernels;   // unique fused functions, kernel i is named kernel_name(i)
  std::vector<std::string> kernel_names;
  std::vector<Tensor> constants;
  std::vector<Value> values;
  std::vector<Call> calls;         // in execution order
  std::vector<int> inputs;         // value per @main parameter
  std::vector<int> outputs;        // value per @main result (tuple flattened)
  int64_t arena_bytes = 0;         // planned activation memory (storage reuse)
  int64_t intermediate_bytes = 0;  // sum of all intermediate tensor sizes (no reuse)
  int kernel_launches = 0;         // kernel calls per run (generated and fallback; not elided ones)
};

// Plans a module whose @main calls only fused primitive functions (passes::fuse_ops) and
// external functions. Identical fused functions share one kernel. A fused function with the
// attribute Fallback (its reason) is run by the reference kernels instead of generated code.
inline constexpr const char* kFallbackAttr = "Fallback";
// A fused function whose result may be planned in the storage of its input number k (the
// attribute's value) when nothing reads that input after the call: its kernel reads each element
// of the input before writing that of the result (a convolution accumulating onto its residual:
// oneDNN's sum post-op). Its kernel is built with PrimFunc::params_may_alias.
inline constexpr const char* kInPlaceAttr = "InPlace";
Plan plan_module(const ir::Module& fused);

}  // namespace sy::native
