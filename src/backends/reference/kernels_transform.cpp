// Reference kernels of layout transforms: reshape, transpose, concat, split, strided slice,
// broadcast, tile, trilu and pad.
#include <sstream>

#include "backends/reference/kernels_util.h"
#include "ops/op.h"

namespace sy::reference::detail {

Tensor reshape(const Tensor& x, const ir::Type& out_type) {
  const Shape& s = ir::as_tensor(out_type).shape;
  SY_CHECK(shape_numel(s) == x.numel()) << "reshape: " << shape_str(x.shape()) << " to " << shape_str(s);
  // Tensors are never written after they are produced, so the storage can be shared.
  return x.reshaped(s);
}

Tensor transpose(const ops::TransposeAttrs& a, const Tensor& x, const ir::Type& out_type) {
  std::vector<int64_t> perm = a.perm;
  if (perm.empty())  // ONNX default: reverse the axes
    for (int64_t d = x.ndim(); d-- > 0;) perm.push_back(d);
  Tensor out = transpose_tensor(x, perm);
  SY_CHECK(out.shape() == ir::as_tensor(out_type).shape) << "transpose: output shape mismatch";
  return out;
}

Tensor concat(const ops::AxisAttrs& a, const Args& args, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  const size_t axis = static_cast<size_t>(a.axis);
  SY_CHECK(a.axis >= 0 && a.axis < out.ndim()) << "concatenate: axis out of range";
  const int64_t outer = dims_product(out.shape(), 0, axis);
  const int64_t inner = dims_product(out.shape(), axis + 1, out.shape().size());
  const size_t esize = dtype_size(out.dtype());
  const int64_t out_row = out.shape()[axis] * inner;
  auto* dst = static_cast<uint8_t*>(out.raw());
  int64_t at = 0;  // running offset along the axis
  for (const Tensor& t : args) {
    SY_CHECK(t.dtype() == out.dtype() && t.ndim() == out.ndim()) << "concatenate: operand mismatch";
    const int64_t chunk = t.shape()[axis] * inner;
    const auto* src = static_cast<const uint8_t*>(t.raw());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + static_cast<size_t>(o * out_row + at * inner) * esize,
                  src + static_cast<size_t>(o * chunk) * esize, static_cast<size_t>(chunk) * esize);
    at += t.shape()[axis];
  }
  SY_CHECK(at == out.shape()[axis]) << "concatenate: operands do not fill the output";
  return out;
}

std::vector<Tensor> split(const ops::SplitAttrs& a, const Tensor& x, const ir::Type& out_type) {
  SY_CHECK(out_type->kind == ir::TypeKind::Tuple && out_type->fields.size() == a.sizes.size())
      << "split: output type does not match sizes";
  SY_CHECK(a.axis >= 0 && a.axis < x.ndim()) << "split: axis out of range";
  const size_t axis = static_cast<size_t>(a.axis);
  std::vector<int64_t> st = row_major_strides(x.shape());
  std::vector<Tensor> outs;
  int64_t begin = 0;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    Tensor o = make_output(out_type->fields[i]);
    SY_CHECK(o.shape()[axis] == a.sizes[i]) << "split: output " << i << " has the wrong size";
    strided_gather(o.raw(), x.raw(), dtype_size(x.dtype()), o.shape(), st, begin * st[axis]);
    begin += a.sizes[i];
    outs.push_back(std::move(o));
  }
  SY_CHECK(begin == x.shape()[axis]) << "split: sizes do not cover the axis";
  return outs;
}

Tensor strided_slice(const ops::StridedSliceAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  const size_t r = x.shape().size();
  SY_CHECK(a.begin.size() == r && a.end.size() == r && a.strides.size() == r && out.shape().size() == r)
      << "strided_slice: one begin/end/stride per axis expected";
  std::vector<int64_t> in_st = row_major_strides(x.shape());
  std::vector<int64_t> st(r);
  int64_t offset = 0;
  for (size_t d = 0; d < r; ++d) {
    const int64_t n = out.shape()[d], b = a.begin[d], s = a.strides[d];
    SY_CHECK(s != 0) << "strided_slice: zero step";
    // Every selected index must lie inside the axis.
    if (n > 0) {
      const int64_t last = b + (n - 1) * s;
      SY_CHECK(b >= 0 && b < x.shape()[d] && last >= 0 && last < x.shape()[d])
          << "strided_slice: axis " << d << " slice [" << b << ":" << a.end[d] << ":" << s << "] of size " << n
          << " leaves the axis of size " << x.shape()[d];
    }
    offset += (n > 0 ? b : 0) * in_st[d];
    st[d] = s * in_st[d];
  }
  strided_gather(out.raw(), x.raw(), dtype_size(x.dtype()), out.shape(), st, offset);
  return out;
}

Tensor broadcast_to(const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  strided_gather(out.raw(), x.raw(), dtype_size(x.dtype()), out.shape(), broadcast_strides(x.shape(), out.shape()), 0);
  return out;
}

Tensor tile(const ops::RepsAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  SY_CHECK(a.reps.size() == x.shape().size()) << "tile: one repeat per axis expected";
  // The output viewed as [r0, d0, r1, d1, ...] reads x with stride 0 on every repeat axis.
  std::vector<int64_t> in_st = row_major_strides(x.shape());
  Shape view;
  std::vector<int64_t> st;
  for (size_t d = 0; d < a.reps.size(); ++d) {
    view.push_back(a.reps[d]);
    st.push_back(0);
    view.push_back(x.shape()[d]);
    st.push_back(in_st[d]);
  }
  SY_CHECK(shape_numel(view) == out.numel()) << "tile: output shape mismatch";
  strided_gather(out.raw(), x.raw(), dtype_size(x.dtype()), view, st, 0);
  return out;
}

Tensor trilu(const ops::TriluAttrs& a, const Tensor& x, const ir::Type& out_type) {
  if (x.ndim() < 2) throw Error("trilu: expects a tensor of rank >= 2, got " + shape_str(x.shape()));
  const int64_t k = a.k;  // the importer folds ONNX's k input into the attribute
  Tensor out = x.clone();
  SY_CHECK(out.shape() == ir::as_tensor(out_type).shape) << "trilu: output shape mismatch";
  const int64_t R = x.shape()[x.shape().size() - 2], C = x.shape().back();
  const int64_t mats = R * C == 0 ? 0 : x.numel() / (R * C);
  const size_t esize = dtype_size(x.dtype());
  auto* p = static_cast<uint8_t*>(out.raw());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        const bool keep = a.upper ? j - i >= k : j - i <= k;
        if (!keep) std::memset(p + static_cast<size_t>((m * R + i) * C + j) * esize, 0, esize);
      }
  return out;
}

namespace {

// Source index along one axis for output position o (before the begin pad), or -1 for the
// constant value.
int64_t pad_source(int64_t o, int64_t begin, int64_t dim, const std::string& mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  if (mode == "constant" || dim == 0) return -1;
  if (mode == "edge") return i < 0 ? 0 : dim - 1;
  if (mode == "wrap") return ((i % dim) + dim) % dim;
  // reflect: mirror around the edges without repeating them (numpy 'reflect').
  if (dim == 1) return 0;
  const int64_t period = 2 * (dim - 1);
  i = ((i % period) + period) % period;
  return i < dim ? i : period - i;
}

}  // namespace

Tensor pad(const ops::PadAttrs& a, const Tensor& x, const ir::Type& out_type) {
  Tensor out = make_output(out_type);
  const size_t r = x.shape().size();
  if (a.pads.size() != 2 * r)
    throw Error("nn.pad: expects " + std::to_string(2 * r) + " pads for rank " + std::to_string(r) + ", got " +
                std::to_string(a.pads.size()));
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && a.mode != "wrap")
    throw Error("nn.pad: unknown mode '" + a.mode + "' (expected constant, reflect, edge or wrap)");
  if (out.numel() == 0) return out;
  if (r == 0) return x.clone();
  for (size_t d = 0; d < r; ++d) {
    SY_CHECK(out.shape()[d] == x.shape()[d] + a.pads[d] + a.pads[r + d]) << "nn.pad: output shape mismatch";
    if (a.mode != "constant" && x.shape()[d] == 0 && out.shape()[d] > 0)
      throw Error("nn.pad: mode '" + a.mode + "' cannot pad an empty axis");
  }
  // Per-axis source maps.
  std::vector<std::vector<int64_t>> src(r);
  for (size_t d = 0; d < r; ++d)
    for (int64_t o = 0; o < out.shape()[d]; ++o) src[d].push_back(pad_source(o, a.pads[d], x.shape()[d], a.mode));
  std::vector<int64_t> in_st = row_major_strides(x.shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T value = static_cast<T>(a.value);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
    // Rows of the innermost axis; the outer axes pick the source row (or the constant).
    const int64_t inner = out.shape()[r - 1];
    const int64_t rows = out.numel() / inner;
    const std::vector<int64_t>& last = src[r - 1];
#pragma omp parallel for if (out.numel() > kParallelGrain)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t off = 0, rem = row;
      bool constant_row = false;
      for (size_t d = r - 1; d-- > 0;) {
        const int64_t s = src[d][static_cast<size_t>(rem % out.shape()[d])];
        rem /= out.shape()[d];
        if (s < 0) constant_row = true;
        off += s * in_st[d];
      }
      T* dst = o + row * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t s = last[static_cast<size_t>(j)];
        dst[j] = constant_row || s < 0 ? value : in[off + s];
      }
    }
  });
  return out;
}

}  // namespace sy::reference::detail
