// Internal helpers shared by the reference kernel files: attribute access, output allocation,
// index arithmetic (strides, broadcasting, strided copies) and the per-family entry points.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "support/wrap_arith.h"
#include "ir/attrs.h"
#include "ir/type.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"
#include "support/tensor.h"

namespace sy::reference::detail {

using Args = std::vector<Tensor>;

// Below this many elements a loop is not worth an OpenMP parallel region.
inline constexpr int64_t kParallelGrain = 32768;

template <typename A>
const A& attrs_as(const ir::Attrs& attrs) {
  auto* p = dynamic_cast<const A*>(&attrs);
  SY_CHECK(p) << "reference kernel expected " << A::kName << ", got " << attrs.type_name();
  return *p;
}

// A zero-initialised tensor of a tensor type.
inline Tensor make_output(const ir::Type& t) {
  const ir::TypeNode& tt = ir::as_tensor(t);
  return Tensor(tt.dtype, tt.shape);
}

// Row-major strides in elements.
std::vector<int64_t> row_major_strides(const Shape& s);

// Strides for reading a tensor of shape `in` while iterating an output of shape `out` under
// numpy broadcasting (in is right-aligned; broadcast axes get stride 0).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Product of dims [begin, end).
int64_t dims_product(const Shape& s, size_t begin, size_t end);

// out (contiguous, `shape`)[idx] = in[offset + sum_d idx[d] * strides[d]] for elements of esize
// bytes. The workhorse of transpose, broadcast_to, strided_slice, tile and depth/space moves.
void strided_gather(void* out, const void* in, size_t esize, const Shape& shape,
                    const std::vector<int64_t>& strides, int64_t offset);

// x with its axes permuted (out.shape[d] = x.shape[perm[d]]).
Tensor transpose_tensor(const Tensor& x, const std::vector<int64_t>& perm);

// Calls f(U{}) with the unsigned integer type of the given element size (1, 2, 4 or 8 bytes):
// for kernels that only move elements around.
template <typename F>
decltype(auto) dispatch_bytes(size_t esize, F&& f) {
  switch (esize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: break;
  }
  SY_CHECK(esize == 8) << "unsupported element size " << esize;
  return f(uint64_t{});
}

// Typed raw pointers (dtype already checked by the caller through dispatch).
template <typename T> const T* ptr(const Tensor& t) { return static_cast<const T*>(t.raw()); }
template <typename T> T* ptr(Tensor& t) { return static_cast<T*>(t.raw()); }

// Reads index element i of an int32/int64 tensor.
inline int64_t index_at(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::i32) return ptr<int32_t>(t)[i];
  SY_CHECK(t.dtype() == DType::i64) << "index tensor of " << dtype_name(t.dtype());
  return ptr<int64_t>(t)[i];
}

// Normalises an index into [0, dim) allowing negative indices in [-dim, -1]; throws sy::Error
// naming `what` when out of range.
int64_t normalize_index(int64_t idx, int64_t dim, const char* what);

using sy::wrap_add;
using sy::wrap_mul;
using sy::wrap_sub;

// Iterates an output of shape `out` fed by K inputs under numpy broadcasting. Axes are merged
// where every input allows it, then body(o, off, n, step) is called for each run of the
// innermost axis: output elements [o, o + n) read input k at off[k] + j * step[k]. Runs are
// distributed over threads when the output is large, so body must not throw.
template <size_t K, typename Body>
void broadcast_rows(const Shape& out, const std::array<const Shape*, K>& ins, Body body) {
  const int64_t total = shape_numel(out);
  if (total == 0) return;
  std::array<std::vector<int64_t>, K> st;
  for (size_t k = 0; k < K; ++k) st[k] = broadcast_strides(*ins[k], out);
  Shape sh;
  std::array<std::vector<int64_t>, K> mst;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !sh.empty();
    for (size_t k = 0; k < K && merge; ++k) merge = mst[k].back() == st[k][d] * out[d];
    if (merge) {
      sh.back() *= out[d];
      for (size_t k = 0; k < K; ++k) mst[k].back() = st[k][d];
    } else {
      sh.push_back(out[d]);
      for (size_t k = 0; k < K; ++k) mst[k].push_back(st[k][d]);
    }
  }
  if (sh.empty()) {
    sh.push_back(1);
    for (size_t k = 0; k < K; ++k) mst[k].push_back(0);
  }
  const size_t r = sh.size();
  const int64_t inner = sh[r - 1];
  const int64_t rows = total / inner;
  std::array<int64_t, K> step;
  for (size_t k = 0; k < K; ++k) step[k] = mst[k][r - 1];
#pragma omp parallel for if (total > kParallelGrain)
  for (int64_t row = 0; row < rows; ++row) {
    std::array<int64_t, K> off{};
    int64_t rem = row;
    for (size_t d = r - 1; d-- > 0;) {
      int64_t i = rem % sh[d];
      rem /= sh[d];
      for (size_t k = 0; k < K; ++k) off[k] += i * mst[k][d];
    }
    body(row * inner, off, inner, step);
  }
}

// ---- family entry points (one per kernel file) ----
// kernels_unary.cpp: every unary elementwise op, including cast, clip and the activations.
Tensor unary(ops::OpCode op, const ir::Attrs& attrs, const Tensor& x, const ir::Type& out_type);
// kernels_binary.cpp: broadcasting binary ops and where.
Tensor binary(ops::OpCode op, const ir::Attrs& attrs, const Tensor& a, const Tensor& b,
              const ir::Type& out_type);
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const ir::Type& out_type);
// kernels_conv.cpp
Tensor conv2d(const ops::Conv2dAttrs& a, const Args& args, const ir::Type& out_type);
Tensor conv2d_transpose(const ops::ConvTranspose2dAttrs& a, const Args& args, const ir::Type& out_type);
// kernels_matmul.cpp
Tensor matmul(const Tensor& a, const Tensor& b, const ir::Type& out_type);
Tensor dense(const Args& args, const ir::Type& out_type);
// kernels_pool.cpp
Tensor pool2d(ops::OpCode op, const ops::Pool2dAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor global_pool2d(ops::OpCode op, const Tensor& x, const ir::Type& out_type);
// kernels_norm.cpp
Tensor batch_norm(const ops::BatchNormAttrs& a, const Args& args, const ir::Type& out_type);
Tensor layer_norm(const ops::LayerNormAttrs& a, const Args& args, const ir::Type& out_type);
Tensor instance_norm(const ops::EpsilonAttrs& a, const Args& args, const ir::Type& out_type);
Tensor lrn(const ops::LRNAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor softmax(bool log, const ops::AxisAttrs& a, const Tensor& x, const ir::Type& out_type);
// kernels_transform.cpp
Tensor reshape(const Tensor& x, const ir::Type& out_type);
Tensor transpose(const ops::TransposeAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor concat(const ops::AxisAttrs& a, const Args& args, const ir::Type& out_type);
std::vector<Tensor> split(const ops::SplitAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor strided_slice(const ops::StridedSliceAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor broadcast_to(const Tensor& x, const ir::Type& out_type);
Tensor tile(const ops::RepsAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor trilu(const ops::TriluAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor pad(const ops::PadAttrs& a, const Tensor& x, const ir::Type& out_type);
// kernels_gather.cpp
Tensor take(const ops::AxisAttrs& a, const Tensor& data, const Tensor& indices, const ir::Type& out_type);
Tensor gather_elements(const ops::AxisAttrs& a, const Tensor& data, const Tensor& indices,
                       const ir::Type& out_type);
Tensor max_roi_pool(const ops::MaxRoiPoolAttrs& a, const Tensor& x, const Tensor& rois, const ir::Type& out_type);
Tensor gather_nd(const ops::BatchDimsAttrs& a, const Tensor& data, const Tensor& indices,
                 const ir::Type& out_type);
Tensor one_hot(const ops::OneHotAttrs& a, const Tensor& indices, const Tensor& values,
               const ir::Type& out_type);
// kernels_image.cpp
Tensor depth_to_space(const ops::DepthToSpaceAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor space_to_depth(const ops::BlockSizeAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor resize2d(const ops::Resize2dAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor grid_sample(const ops::GridSampleAttrs& a, const Tensor& x, const Tensor& grid, const ir::Type& out_type);
Tensor roi_align(const ops::RoiAlignAttrs& a, const Tensor& x, const Tensor& rois, const Tensor& batch_indices,
                 const ir::Type& out_type);
// kernels_reduce.cpp
Tensor reduce(ops::OpCode op, const ops::ReduceAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor arg_reduce(ops::OpCode op, const ops::ArgReduceAttrs& a, const Tensor& x, const ir::Type& out_type);
std::vector<Tensor> topk(const ops::TopKAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor cumsum(const ops::CumSumAttrs& a, const Tensor& x, const ir::Type& out_type);
Tensor det(const Tensor& x, const ir::Type& out_type);
// kernels_scatter.cpp
Tensor scatter_elements(const ops::ScatterAttrs& a, const Args& args, const ir::Type& out_type);
Tensor scatter_nd(const ops::ScatterAttrs& a, const Args& args, const ir::Type& out_type);

}  // namespace sy::reference::detail
