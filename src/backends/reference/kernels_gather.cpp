// Reference kernels of indexed reads: take (ONNX Gather), gather_elements, gather_nd and one_hot.
// Indices may be negative (counted from the end); an index out of range is a user error.
#include <sstream>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

// All indices of t normalised into [0, dim) (or a sy::Error naming the op).
std::vector<int64_t> normalized_indices(const Tensor& t, int64_t dim, const char* what) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = normalize_index(index_at(t, i), dim, what);
  return v;
}

}  // namespace

Tensor take(const ops::AxisAttrs& a, const Tensor& data, const Tensor& indices, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(a.axis >= 0 && a.axis < data.ndim()) << "take: axis out of range";
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t dim = data.shape()[axis];
  const int64_t outer = dims_product(data.shape(), 0, axis);
  const int64_t inner = dims_product(data.shape(), axis + 1, data.shape().size());
  std::vector<int64_t> idx = normalized_indices(indices, dim, "take: index");
  const int64_t nidx = static_cast<int64_t>(idx.size());
  SY_CHECK(out.numel() == outer * nidx * inner) << "take: output shape mismatch";
  const size_t esize = dtype_size(data.dtype());
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  const size_t block = static_cast<size_t>(inner) * esize;
#pragma omp parallel for if (out.numel() > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < nidx; ++i)
      std::memcpy(dst + static_cast<size_t>(o * nidx + i) * block,
                  src + static_cast<size_t>(o * dim + idx[static_cast<size_t>(i)]) * block, block);
  return out;
}

Tensor gather_elements(const ops::AxisAttrs& a, const Tensor& data, const Tensor& indices, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(a.axis >= 0 && a.axis < data.ndim() && indices.ndim() == data.ndim()) << "gather_elements: bad rank/axis";
  SY_CHECK(out.shape() == indices.shape()) << "gather_elements: output shape must be the indices shape";
  const size_t axis = static_cast<size_t>(a.axis);
  std::vector<int64_t> idx = normalized_indices(indices, data.shape()[axis], "gather_elements: index");
  const Shape& is = indices.shape();
  for (size_t d = 0; d < is.size(); ++d)
    SY_CHECK(d == axis || is[d] <= data.shape()[d]) << "gather_elements: indices " << shape_str(is)
                                                     << " exceed data " << shape_str(data.shape());
  std::vector<int64_t> data_st = row_major_strides(data.shape());
  dispatch_bytes(dtype_size(data.dtype()), [&](auto tag) {
    using U = decltype(tag);
    const U* src = ptr<U>(data);
    U* dst = ptr<U>(out);
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t rem = i, off = 0;
      for (size_t d = is.size(); d-- > 0;) {
        const int64_t c = rem % is[d];
        rem /= is[d];
        off += (d == axis ? idx[static_cast<size_t>(i)] : c) * data_st[d];
      }
      dst[i] = src[off];
    }
  });
  return out;
}

Tensor gather_nd(const ops::BatchDimsAttrs& a, const Tensor& data, const Tensor& indices, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  const int64_t b = a.batch_dims;
  SY_CHECK(indices.ndim() >= 1 && b >= 0 && b < indices.ndim() && b < data.ndim()) << "gather_nd: bad ranks";
  const int64_t q = indices.shape().back();
  SY_CHECK(q >= 1 && b + q <= data.ndim()) << "gather_nd: index tuples longer than the data rank";
  const size_t ub = static_cast<size_t>(b), uq = static_cast<size_t>(q);
  const int64_t batches = dims_product(data.shape(), 0, ub);
  const int64_t tuples_per_batch = dims_product(indices.shape(), ub, indices.shape().size() - 1);
  const int64_t slice = dims_product(data.shape(), ub + uq, data.shape().size());
  const int64_t batch_stride = dims_product(data.shape(), ub, data.shape().size());
  SY_CHECK(out.numel() == batches * tuples_per_batch * slice) << "gather_nd: output shape mismatch";
  std::vector<int64_t> st = row_major_strides(data.shape());
  const size_t esize = dtype_size(data.dtype());
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t bt = 0; bt < batches; ++bt) {
    for (int64_t t = 0; t < tuples_per_batch; ++t) {
      const int64_t tuple = bt * tuples_per_batch + t;
      int64_t off = bt * batch_stride;
      for (size_t j = 0; j < uq; ++j) {
        const int64_t dim = data.shape()[ub + j];
        off += normalize_index(index_at(indices, tuple * q + static_cast<int64_t>(j)), dim, "gather_nd: index") *
               st[ub + j];
      }
      std::memcpy(dst + static_cast<size_t>(tuple * slice) * esize, src + static_cast<size_t>(off) * esize,
                  static_cast<size_t>(slice) * esize);
    }
  }
  return out;
}

Tensor one_hot(const ops::OneHotAttrs& a, const Tensor& indices, const Tensor& values, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  if (values.numel() != 2) throw Error("one_hot: values must hold [off, on], got " + shape_str(values.shape()));
  SY_CHECK(values.dtype() == out.dtype()) << "one_hot: values dtype differs from the output";
  const int64_t depth = a.depth;
  SY_CHECK(a.axis >= 0 && a.axis <= indices.ndim()) << "one_hot: axis out of range";
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t outer = dims_product(indices.shape(), 0, axis);
  const int64_t inner = dims_product(indices.shape(), axis, indices.shape().size());
  SY_CHECK(out.numel() == outer * depth * inner) << "one_hot: output shape mismatch";
  dispatch_bytes(dtype_size(out.dtype()), [&](auto tag) {
    using U = decltype(tag);
    const U off_v = ptr<U>(values)[0], on_v = ptr<U>(values)[1];
    U* dst = ptr<U>(out);
    for (int64_t i = 0; i < out.numel(); ++i) dst[i] = off_v;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        int64_t v = static_cast<int64_t>(indices.get_as_double(o * inner + in));
        if (v < 0) v += depth;  // negative indices count from the end
        if (v < 0 || v >= depth) continue;  // out of range: all off
        dst[(o * depth + v) * inner + in] = on_v;
      }
  });
  return out;
}

}  // namespace sy::reference::detail
