// TensorProto -> sy::Tensor: raw_data, the typed repeated fields and external data files.
#include "frontends/onnx/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "onnx/onnx.pb.h"
#include "support/error.h"

namespace sy::onnx {

using ::onnx::TensorProto;

std::optional<DType> dtype_from_onnx(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT: return DType::f32;
    case TensorProto::DOUBLE: return DType::f64;
    case TensorProto::INT8: return DType::i8;
    case TensorProto::INT16: return DType::i16;
    case TensorProto::INT32: return DType::i32;
    case TensorProto::INT64: return DType::i64;
    case TensorProto::UINT8: return DType::u8;
    case TensorProto::BOOL: return DType::boolean;
    default: return std::nullopt;
  }
}

std::string onnx_dtype_name(int32_t t) {
  switch (t) {
    case TensorProto::UNDEFINED: return "undefined";
    case TensorProto::FLOAT: return "float32";
    case TensorProto::UINT8: return "uint8";
    case TensorProto::INT8: return "int8";
    case TensorProto::UINT16: return "uint16";
    case TensorProto::INT16: return "int16";
    case TensorProto::INT32: return "int32";
    case TensorProto::INT64: return "int64";
    case TensorProto::STRING: return "string";
    case TensorProto::BOOL: return "bool";
    case TensorProto::FLOAT16: return "float16";
    case TensorProto::DOUBLE: return "float64";
    case TensorProto::UINT32: return "uint32";
    case TensorProto::UINT64: return "uint64";
    case TensorProto::COMPLEX64: return "complex64";
    case TensorProto::COMPLEX128: return "complex128";
    case TensorProto::BFLOAT16: return "bfloat16";
    default: return "unknown data type " + std::to_string(t);
  }
}

namespace {

// Element counts beyond this are certainly corrupt (2^40 elements is terabytes).
constexpr int64_t kMaxNumel = int64_t{1} << 40;

Shape checked_shape(const TensorProto& p, const std::string& what) {
  Shape shape;
  int64_t nonzero = 1;  // a zero extent does not excuse the others (their strides would overflow)
  for (int64_t d : p.dims()) {
    if (d < 0) throw Error(what + ": negative dimension " + std::to_string(d));
    shape.push_back(d);
    if (d != 0 && nonzero > kMaxNumel / d)
      throw Error(what + ": absurd element count (dims overflow)");
    if (d != 0) nonzero *= d;
  }
  return shape;
}

// Reads `length` bytes at `offset` of an external data file, with bounds checks.
std::string read_external(const TensorProto& p, const std::string& model_dir, const std::string& what,
                          size_t expected_bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    auto parse_num = [&](const std::string& s) -> int64_t {
      try {
        size_t pos = 0;
        long long v = std::stoll(s, &pos);
        if (pos != s.size() || v < 0) throw std::invalid_argument(s);
        return v;
      } catch (const std::exception&) {
        throw Error(what + ": external data " + kv.key() + " '" + s + "' is not a non-negative integer");
      }
    };
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_num(kv.value());
    else if (kv.key() == "length") length = parse_num(kv.value());
  }
  if (location.empty()) throw Error(what + ": external data without a location");
  if (model_dir.empty()) throw Error(what + ": external data '" + location + "' but the model was not loaded from a file");
  std::filesystem::path rel(location);
  if (rel.is_absolute()) throw Error(what + ": external data location '" + location + "' must be relative to the model");
  for (const auto& part : rel)
    if (part == "..") throw Error(what + ": external data location '" + location + "' leaves the model directory");
  std::filesystem::path full = std::filesystem::path(model_dir) / rel;
  std::error_code ec;
  auto fsize = std::filesystem::file_size(full, ec);
  if (ec) throw Error(what + ": cannot read external data file '" + full.string() + "': " + ec.message());
  if (static_cast<uint64_t>(offset) > fsize)
    throw Error(what + ": external data offset " + std::to_string(offset) + " is beyond the end of '" +
                full.string() + "' (" + std::to_string(fsize) + " bytes)");
  uint64_t avail = fsize - static_cast<uint64_t>(offset);
  uint64_t want = length >= 0 ? static_cast<uint64_t>(length) : avail;
  if (want > avail)
    throw Error(what + ": external data range [" + std::to_string(offset) + ", " +
                std::to_string(offset + length) + ") is beyond the end of '" + full.string() + "' (" +
                std::to_string(fsize) + " bytes)");
  if (want != expected_bytes)
    throw Error(what + ": external data has " + std::to_string(want) + " bytes, the tensor needs " +
                std::to_string(expected_bytes));
  std::ifstream in(full, std::ios::binary);
  if (!in) throw Error(what + ": cannot open external data file '" + full.string() + "'");
  in.seekg(offset);
  std::string buf(expected_bytes, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(expected_bytes));
  if (static_cast<size_t>(in.gcount()) != expected_bytes)
    throw Error(what + ": short read from external data file '" + full.string() + "'");
  return buf;
}

template <typename Field>
void check_count(const Field& f, int64_t numel, const std::string& what, const char* field) {
  if (static_cast<int64_t>(f.size()) != numel)
    throw Error(what + ": " + field + " has " + std::to_string(f.size()) + " values, shape needs " +
                std::to_string(numel) + " (initializer data size mismatch)");
}

}  // namespace

Tensor tensor_from_proto(const TensorProto& p, const std::string& model_dir, const std::string& what,
                         std::optional<std::string_view> raw_data) {
  auto dt = dtype_from_onnx(p.data_type());
  if (!dt) throw Error(what + ": unsupported dtype " + onnx_dtype_name(p.data_type()));
  if (p.has_segment()) throw Error(what + ": segmented tensors are unsupported");
  Shape shape = checked_shape(p, what);
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  size_t esize = dtype_size(*dt);
  size_t nbytes = static_cast<size_t>(numel) * esize;

  bool external = p.data_location() == TensorProto::EXTERNAL;
  if (external || raw_data || p.has_raw_data()) {
    std::string ext;
    std::string_view bytes = raw_data ? *raw_data : std::string_view(p.raw_data());
    if (external) {
      ext = read_external(p, model_dir, what, nbytes);
      bytes = ext;
    }
    if (bytes.size() != nbytes)
      throw Error(what + ": raw_data has " + std::to_string(bytes.size()) + " bytes, shape " + shape_str(shape) +
                  " of " + std::string(dtype_name(*dt)) + " needs " + std::to_string(nbytes) +
                  " (initializer data size mismatch)");
    Tensor t = Tensor::uninitialized(*dt, shape);  // every byte is written below
    if (*dt == DType::boolean) {
      bool* out = t.data<bool>();
      for (int64_t i = 0; i < numel; ++i) out[i] = bytes[static_cast<size_t>(i)] != 0;
    } else if (nbytes) {
      std::memcpy(t.raw(), bytes.data(), nbytes);
    }
    return t;
  }

  // Typed fields: validate the count, then allocate.
  switch (*dt) {
    case DType::f32: check_count(p.float_data(), numel, what, "float_data"); break;
    case DType::f64: check_count(p.double_data(), numel, what, "double_data"); break;
    case DType::i64: check_count(p.int64_data(), numel, what, "int64_data"); break;
    default: check_count(p.int32_data(), numel, what, "int32_data"); break;
  }
  Tensor t(*dt, shape);
  dispatch_dtype(*dt, [&](auto tag) {
    using T = decltype(tag);
    T* out = t.data<T>();
    for (int64_t i = 0; i < numel; ++i) {
      int k = static_cast<int>(i);
      if constexpr (std::is_same_v<T, float>) out[i] = p.float_data(k);
      else if constexpr (std::is_same_v<T, double>) out[i] = p.double_data(k);
      else if constexpr (std::is_same_v<T, int64_t>) out[i] = p.int64_data(k);
      else if constexpr (std::is_same_v<T, bool>) out[i] = p.int32_data(k) != 0;
      else out[i] = static_cast<T>(p.int32_data(k));
    }
  });
  return t;
}

}  // namespace sy::onnx
