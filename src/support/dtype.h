// Element types of tensors, their names and sizes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sy {

enum class DType : uint8_t { f32, f64, i8, i16, i32, i64, u8, boolean };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::i8, DType::i16,
                                       DType::i32, DType::i64, DType::u8, DType::boolean};

size_t dtype_size(DType t);
// Canonical names as printed in the IR: float32, float64, int8, int16, int32, int64, uint8, bool.
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
bool is_float(DType t);
bool is_integer(DType t);  // signed or unsigned integer, not bool

// Calls f(T{}) with the C++ type of dt (bool is stored as uint8_t-sized bool).
template <typename F>
decltype(auto) dispatch_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::i8: return f(int8_t{});
    case DType::i16: return f(int16_t{});
    case DType::i32: return f(int32_t{});
    case DType::i64: return f(int64_t{});
    case DType::u8: return f(uint8_t{});
    case DType::boolean: return f(bool{});
  }
  return f(float{});
}

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::i16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }

}  // namespace sy
