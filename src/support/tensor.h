// Tensor: a dense, row-major, 64-byte aligned n-d array with shared storage.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "support/dtype.h"
#include "support/error.h"

namespace sy {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);  // "(1, 3, 224, 224)"

class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-initialised storage.
  Tensor(DType dtype, Shape shape);

  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values) {
    Tensor t(dtype_of<T>(), std::move(shape));
    SY_CHECK(static_cast<int64_t>(values.size()) == t.numel()) << "size mismatch";
    T* d = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) d[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor scalar(T v) { return from_vector<T>({}, {v}); }
  // Storage left uninitialised (for results a kernel overwrites completely).
  static Tensor uninitialized(DType dtype, Shape shape);
  // A view of memory owned elsewhere (not freed by the tensor); the owner must outlive every use.
  static Tensor wrap(void* data, DType dtype, Shape shape);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  void* raw() { return storage_.get(); }
  const void* raw() const { return storage_.get(); }
  template <typename T> T* data() { check_type<T>(); return static_cast<T*>(raw()); }
  template <typename T> const T* data() const { check_type<T>(); return static_cast<const T*>(raw()); }

  // Same storage, new shape (numel must match).
  Tensor reshaped(Shape shape) const;
  Tensor clone() const;
  // Element i converted to double (any dtype); convenient for tests and small folding.
  double get_as_double(int64_t i) const;
  int64_t get_as_int(int64_t i) const;
  // Whole tensor as int64 values (for shape-like tensors).
  std::vector<int64_t> to_int_vector() const;
  // Bytewise equality of dtype, shape and data.
  bool bitwise_equal(const Tensor& o) const;

 private:
  template <typename T> void check_type() const {
    SY_CHECK(dtype_of<T>() == dtype_) << "tensor of " << dtype_name(dtype_) << " accessed as "
                                      << dtype_name(dtype_of<T>());
  }
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<uint8_t[]> storage_;
};

}  // namespace sy
