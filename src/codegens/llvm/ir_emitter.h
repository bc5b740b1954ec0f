// Loop IR -> LLVM IR: the kernels of one native library and the tables the module loader reads
// (codegen/c/module.h), with the C generator's meaning (codegen/c/c_generator.cpp) in every
// case: packed entry points, faults instead of traps, parallel loops as OpenMP teams (libgomp's
// GOMP_parallel, static schedule), vector loops asserted free of loop-carried dependences as
// `omp simd` asserts them, glibc's math functions.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "tir/stmt.h"

namespace sy::codegen::llvmgen {

struct EmitOptions {
  int64_t max_stack_bytes = 64 * 1024;  // larger temporaries are allocated on the heap
  int vector_bits = 512;                // prefer-vector-width of the kernels
};

// The math functions glibc's libmvec has vector variants of (the C generator declares the same
// ones `omp declare simd`); llvm_codegen.cpp tells LLVM's loop vectorizer about them too.
const std::set<std::string>& libmvec_functions();

// sy::Error for a construct it has no lowering for (naming it).
std::unique_ptr<llvm::Module> emit_module(llvm::LLVMContext& ctx, const std::vector<tir::PrimFunc>& funcs,
                                          const EmitOptions& opts);

}  // namespace sy::codegen::llvmgen
