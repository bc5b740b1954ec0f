#include "support/tensor.h"

#include <cstring>
#include <sstream>

#include "support/shape_limits.h"
#include "support/tensor_storage.h"

namespace sy {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

bool shape_within_limits(const Shape& s) {
  int64_t nonzero = 1;
  for (int64_t d : s) {
    if (d < 0) return false;
    if (d == 0) continue;
    if (nonzero > kMaxShapeElements / d) return false;
    nonzero *= d;
  }
  return true;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  if (s.size() == 1) os << ",";
  os << ")";
  return os.str();
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) SY_CHECK(d >= 0) << "negative dimension in " << shape_str(shape_);
  numel_ = shape_numel(shape_);
  storage_ = allocate_tensor_storage(nbytes(), /*zeroed=*/true, current_tensor_lifetime());
}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  for (int64_t d : t.shape_) SY_CHECK(d >= 0) << "negative dimension in " << shape_str(t.shape_);
  t.numel_ = shape_numel(t.shape_);
  t.storage_ = allocate_tensor_storage(t.nbytes(), /*zeroed=*/false, current_tensor_lifetime());
  return t;
}

Tensor Tensor::wrap(void* data, DType dtype, Shape shape) {
  SY_CHECK(data) << "wrap of a null pointer";
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  t.storage_ = std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(data), [](uint8_t*) {});
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  SY_CHECK(shape_numel(shape) == numel_) << "reshape " << shape_str(shape_) << " to " << shape_str(shape);
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

double Tensor::get_as_double(int64_t i) const {
  return dispatch_dtype(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(static_cast<const T*>(raw())[i]);
  });
}

int64_t Tensor::get_as_int(int64_t i) const {
  return dispatch_dtype(dtype_, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    return static_cast<int64_t>(static_cast<const T*>(raw())[i]);
  });
}

std::vector<int64_t> Tensor::to_int_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[static_cast<size_t>(i)] = get_as_int(i);
  return v;
}

bool Tensor::bitwise_equal(const Tensor& o) const {
  if (dtype_ != o.dtype_ || shape_ != o.shape_) return false;
  if (nbytes() == 0) return true;
  if (!defined() || !o.defined()) return defined() == o.defined();
  return std::memcmp(raw(), o.raw(), nbytes()) == 0;
}

}  // namespace sy
