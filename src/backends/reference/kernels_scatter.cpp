// Reference kernels of scatter_elements and scatter_nd (reductions none/add/mul/max/min).
// Updates are applied sequentially in index order, so with duplicate indices and no reduction
// the last update wins.
#include <algorithm>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {
namespace {

enum class Reduction { None, Add, Mul, Max, Min };

Reduction parse_reduction(const std::string& r, const char* op) {
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  throw Error(std::string(op) + ": unknown reduction '" + r + "' (expected none, add, mul, max or min)");
}

template <typename T>
void apply(Reduction r, T& dst, T v) {
  switch (r) {
    case Reduction::None: dst = v; break;
    case Reduction::Add: dst = wrap_add<T>(dst, v); break;
    case Reduction::Mul: dst = wrap_mul<T>(dst, v); break;
    case Reduction::Max: dst = std::max(dst, v); break;
    case Reduction::Min: dst = std::min(dst, v); break;
  }
}

}  // namespace

Tensor scatter_elements(const ops::ScatterAttrs& a, const Args& args, const ir::Type& out_type) {
  const Tensor& data = args.at(0);
  const Tensor& indices = args.at(1);
  const Tensor& updates = args.at(2);
  const Reduction red = parse_reduction(a.reduction, "scatter_elements");
  SY_CHECK(a.axis >= 0 && a.axis < data.ndim()) << "scatter_elements: axis out of range";
  SY_CHECK(indices.shape() == updates.shape() && indices.ndim() == data.ndim() && updates.dtype() == data.dtype())
      << "scatter_elements: indices " << shape_str(indices.shape()) << " and updates " << shape_str(updates.shape())
      << " must match in shape and have the rank of data " << shape_str(data.shape());
  const size_t axis = static_cast<size_t>(a.axis);
  const Shape& is = indices.shape();
  for (size_t d = 0; d < is.size(); ++d)
    SY_CHECK(d == axis || is[d] <= data.shape()[d]) << "scatter_elements: indices exceed data on axis " << d;
  Tensor out = data.clone();
  SY_CHECK(out.shape() == ir::as_tensor(out_type).shape) << "scatter_elements: output shape mismatch";
  std::vector<int64_t> st = row_major_strides(data.shape());
  dispatch_dtype(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = ptr<T>(out);
    const T* up = ptr<T>(updates);
    for (int64_t i = 0; i < indices.numel(); ++i) {
      int64_t rem = i, off = 0;
      for (size_t d = is.size(); d-- > 0;) {
        int64_t c = rem % is[d];
        rem /= is[d];
        if (d == axis) c = normalize_index(index_at(indices, i), data.shape()[axis], "scatter_elements: index");
        off += c * st[d];
      }
      apply<T>(red, o[off], up[i]);
    }
  });
  return out;
}

Tensor scatter_nd(const ops::ScatterAttrs& a, const Args& args, const ir::Type& out_type) {
  const Tensor& data = args.at(0);
  const Tensor& indices = args.at(1);
  const Tensor& updates = args.at(2);
  const Reduction red = parse_reduction(a.reduction, "scatter_nd");
  SY_CHECK(indices.ndim() >= 1) << "scatter_nd: indices must have rank >= 1";
  const int64_t q = indices.shape().back();
  SY_CHECK(q >= 1 && q <= data.ndim() && updates.dtype() == data.dtype()) << "scatter_nd: bad index depth";
  const size_t uq = static_cast<size_t>(q);
  const int64_t tuples = dims_product(indices.shape(), 0, indices.shape().size() - 1);
  const int64_t slice = dims_product(data.shape(), uq, data.shape().size());
  SY_CHECK(updates.numel() == tuples * slice)
      << "scatter_nd: updates " << shape_str(updates.shape()) << " do not match indices " << shape_str(indices.shape())
      << " and data " << shape_str(data.shape());
  Tensor out = data.clone();
  SY_CHECK(out.shape() == ir::as_tensor(out_type).shape) << "scatter_nd: output shape mismatch";
  std::vector<int64_t> st = row_major_strides(data.shape());
  dispatch_dtype(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = ptr<T>(out);
    const T* up = ptr<T>(updates);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (size_t j = 0; j < uq; ++j)
        off += normalize_index(index_at(indices, t * q + static_cast<int64_t>(j)), data.shape()[j],
                               "scatter_nd: index") * st[j];
      for (int64_t e = 0; e < slice; ++e) apply<T>(red, o[off + e], up[t * slice + e]);
    }
  });
  return out;
}

}  // namespace sy::reference::detail
