// The C functions behind the extern stages of cumsum, scatter_elements, scatter_nd, topk, prod and
// roi_align, max_roi_pool, det (see
// extern_kernels.cpp for their argument lists), and their registration in the extern table.
#pragma once
#include <cstdint>

namespace sy::topi {

struct Registry;

// Scatter reductions as passed to the scatter functions.
enum : int64_t { kScatterNone = 0, kScatterAdd = 1, kScatterMul = 2, kScatterMax = 3, kScatterMin = 4 };
// Ranks up to this are supported by the scatter functions (shapes are passed as scalars).
inline constexpr int64_t kExternMaxRank = 8;

void register_extern_kernels(Registry& r);

}  // namespace sy::topi

// Each returns a fault code of generated code (codegen::KernelFault; 0 when none), which the
// calling kernel returns: an out-of-range scatter index is an error, as in the reference.
extern "C" {
int32_t sy_topi_cumsum(const void* x, void* out, int64_t dtype, int64_t outer, int64_t D, int64_t inner,
                    int64_t exclusive, int64_t reverse);
int32_t sy_topi_scatter_elements(const void* data, const void* indices, const void* updates, void* out, int64_t dtype,
                              int64_t index_dtype, int64_t reduction, int64_t rank, int64_t axis, int64_t d0,
                              int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t d6, int64_t d7,
                              int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t i4, int64_t i5, int64_t i6,
                              int64_t i7);
int32_t sy_topi_scatter_nd(const void* data, const void* indices, const void* updates, void* out, int64_t dtype,
                        int64_t index_dtype, int64_t reduction, int64_t rank, int64_t q, int64_t tuples, int64_t d0,
                        int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t d6, int64_t d7);
int32_t sy_topi_topk_indices(const void* x, int64_t* out, int64_t dtype, int64_t outer, int64_t D, int64_t inner,
                          int64_t k, int64_t largest);
// spatial_scale_bits: the double's bits; mode_max 0 (avg) or 1; half_pixel 0 or 1.
int32_t sy_topi_roi_align(const void* x, const void* rois, const void* batch_indices, void* out, int64_t dtype,
                          int64_t index_dtype, int64_t N, int64_t C, int64_t H, int64_t W, int64_t R, int64_t PH,
                          int64_t PW, int64_t sampling_ratio, int64_t spatial_scale_bits, int64_t mode_max,
                          int64_t half_pixel);
int32_t sy_topi_max_roi_pool(const void* x, const void* rois, void* out, int64_t dtype, int64_t N, int64_t C, int64_t H,
                             int64_t W, int64_t R, int64_t PH, int64_t PW, int64_t spatial_scale_bits);
int32_t sy_topi_det(const void* x, void* out, int64_t dtype, int64_t count, int64_t M);
int32_t sy_topi_reduce_prod(const void* x, void* out, int64_t dtype, int64_t rank, int64_t reduced_mask, int64_t d0,
                         int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t d6, int64_t d7);
}
