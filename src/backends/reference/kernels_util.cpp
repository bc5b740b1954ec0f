// Index arithmetic shared by the reference kernels: strides, broadcasting and strided copies.
#include "backends/reference/kernels_util.h"

#include <sstream>

namespace sy::reference::detail {

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  SY_CHECK(in.size() <= out.size()) << "cannot broadcast " << shape_str(in) << " to " << shape_str(out);
  std::vector<int64_t> in_st = row_major_strides(in);
  std::vector<int64_t> st(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    SY_CHECK(in[i] == out[lead + i] || in[i] == 1)
        << "cannot broadcast " << shape_str(in) << " to " << shape_str(out);
    st[lead + i] = in[i] == 1 ? 0 : in_st[i];
  }
  return st;
}

int64_t dims_product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

int64_t normalize_index(int64_t idx, int64_t dim, const char* what) {
  if (idx < -dim || idx >= dim) {
    std::ostringstream os;
    os << what << " " << idx << " is out of range for an axis of size " << dim;
    throw Error(os.str());
  }
  return idx < 0 ? idx + dim : idx;
}

void strided_gather(void* out, const void* in, size_t esize, const Shape& shape,
                    const std::vector<int64_t>& strides, int64_t offset) {
  SY_CHECK(shape.size() == strides.size()) << "strided_gather rank mismatch";
  int64_t n = shape_numel(shape);
  if (n == 0) return;
  // Drop unit axes and merge axes that are contiguous in the source, so that the innermost run
  // is as long as possible (a plain copy becomes one memcpy).
  Shape sh;
  std::vector<int64_t> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!sh.empty() && st.back() == strides[d] * shape[d]) {
      sh.back() *= shape[d];
      st.back() = strides[d];
    } else {
      sh.push_back(shape[d]);
      st.push_back(strides[d]);
    }
  }
  if (sh.empty()) {
    sh.push_back(1);
    st.push_back(1);
  }
  const size_t r = sh.size();
  const int64_t inner = sh[r - 1];
  const int64_t inner_stride = st[r - 1];
  const int64_t rows = n / inner;
  dispatch_bytes(esize, [&](auto tag) {
    using U = decltype(tag);
    const U* src = static_cast<const U*>(in);
    U* dst = static_cast<U*>(out);
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t off = offset;
      int64_t rem = row;
      for (size_t d = r - 1; d-- > 0;) {
        off += (rem % sh[d]) * st[d];
        rem /= sh[d];
      }
      U* o = dst + row * inner;
      const U* s = src + off;
      if (inner_stride == 1) {
        std::memcpy(o, s, static_cast<size_t>(inner) * sizeof(U));
      } else {
        for (int64_t j = 0; j < inner; ++j) o[j] = s[j * inner_stride];
      }
    }
  });
}

Tensor transpose_tensor(const Tensor& x, const std::vector<int64_t>& perm) {
  SY_CHECK(static_cast<int64_t>(perm.size()) == x.ndim()) << "transpose perm rank mismatch";
  std::vector<int64_t> in_st = row_major_strides(x.shape());
  Shape out_shape(perm.size());
  std::vector<int64_t> st(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    SY_CHECK(perm[d] >= 0 && perm[d] < x.ndim()) << "transpose perm out of range";
    out_shape[d] = x.shape()[static_cast<size_t>(perm[d])];
    st[d] = in_st[static_cast<size_t>(perm[d])];
  }
  Tensor out(x.dtype(), out_shape);
  strided_gather(out.raw(), x.raw(), dtype_size(x.dtype()), out_shape, st, 0);
  return out;
}

}  // namespace sy::reference::detail
