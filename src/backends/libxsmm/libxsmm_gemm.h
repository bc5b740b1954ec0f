// The stateful extern the libxsmm lowering hook calls: one GEMM call site (a dense or a matmul,
// with its bias and activation), whose small-GEMM kernels libxsmm JIT-generates once, at load.
#pragma once
#include <cstdint>

namespace sy::backends::libxsmm {

// The site's integer attributes, in this order.
enum class GemmMode : int64_t { Dense = 0, MatMul = 1 };                // dense: B is W [N, K]; matmul: [.., K, N]
enum class Epilogue : int64_t { None = 0, Relu = 1, GeluErf = 2, GeluTanh = 3 };
inline constexpr const char* kGemmExtern = "sy_libxsmm_gemm";

// Registers kGemmExtern with the strategy's stateful externs (once, at start-up).
void register_gemm_extern();

}  // namespace sy::backends::libxsmm
