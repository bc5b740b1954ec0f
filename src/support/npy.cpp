// .npy reader and writer: a strict parser of the header's Python-literal dict, then raw data.
#include "support/npy.h"

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "support/error.h"
#include "support/shape_limits.h"

namespace sy::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// Parses the header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') { ++i_; break; }
      std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        h.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      expect('}');
      break;
    }
    skip_ws();
    if (i_ != s_.size()) fail("unexpected text after the dict");
    if (!have_descr) fail("missing key 'descr'");
    if (!have_order) fail("missing key 'fortran_order'");
    if (!have_shape) fail("missing key 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(name_ + ": malformed .npy header: " + what + " (header: " + printable() + ")");
  }
  std::string printable() const {
    std::string out;
    for (char c : s_) {
      if (out.size() > 120) { out += "..."; break; }
      out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string parse_string() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    ++i_;
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != q) ++i_;
    if (i_ >= s_.size()) fail("unterminated string");
    return s_.substr(start, i_++ - start);
  }
  bool parse_bool() {
    skip_ws();
    if (s_.compare(i_, 4, "True") == 0) { i_ += 4; return true; }
    if (s_.compare(i_, 5, "False") == 0) { i_ += 5; return false; }
    fail("'fortran_order' must be True or False");
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    while (true) {
      skip_ws();
      if (peek() == ')') { ++i_; break; }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("shape entries must be non-negative integers");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("shape entry too large");
        v = v * 10 + (s_[i_++] - '0');
      }
      if (peek() == 'L') ++i_;  // Python 2 long literal
      shape.push_back(v);
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      expect(')');
      break;
    }
    return shape;
  }

  const std::string& s_;
  const std::string& name_;
  size_t i_ = 0;
};

DType dtype_from_descr(const std::string& descr, const std::string& name) {
  if (descr.size() != 3)
    throw Error(name + ": unsupported dtype '" + descr +
                "' (supported: float32, float64, int8, int16, int32, int64, uint8, bool)");
  char order = descr[0];
  std::string code = descr.substr(1);
  std::optional<DType> dt;
  if (code == "f4") dt = DType::f32;
  else if (code == "f8") dt = DType::f64;
  else if (code == "i1") dt = DType::i8;
  else if (code == "i2") dt = DType::i16;
  else if (code == "i4") dt = DType::i32;
  else if (code == "i8") dt = DType::i64;
  else if (code == "u1") dt = DType::u8;
  else if (code == "b1") dt = DType::boolean;
  if (!dt || (order != '<' && order != '>' && order != '|' && order != '='))
    throw Error(name + ": unsupported dtype '" + descr +
                "' (supported: float32, float64, int8, int16, int32, int64, uint8, bool)");
  // '=' is native order, little-endian on every host we build for; one-byte types have no order.
  if (order == '>' && dtype_size(*dt) > 1)
    throw Error(name + ": big-endian data ('" + descr + "') is not supported; save it with arr.astype('<" +
                code + "')");
  return *dt;
}

uint32_t read_le(const std::string& b, size_t pos, size_t n) {
  uint32_t v = 0;
  for (size_t k = 0; k < n; ++k) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[pos + k])) << (8 * k);
  return v;
}

std::string descr_of(DType t) {
  switch (t) {
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i8: return "|i1";
    case DType::i16: return "<i2";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::u8: return "|u1";
    case DType::boolean: return "|b1";
  }
  SY_CHECK(false) << "unknown dtype";
  return "";
}

}  // namespace

Tensor read_bytes(const std::string& b, const std::string& name) {
  if (b.size() < kMagicLen || std::memcmp(b.data(), kMagic, kMagicLen) != 0)
    throw Error(name + ": not a .npy file (missing the \\x93NUMPY magic)");
  if (b.size() < kMagicLen + 2) throw Error(name + ": truncated: file ends inside the .npy preamble");
  int major = static_cast<unsigned char>(b[6]);
  int minor = static_cast<unsigned char>(b[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw Error(name + ": unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                " (supported: 1.0, 2.0, 3.0)");
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicLen + 2 + len_bytes;
  if (b.size() < prefix) throw Error(name + ": truncated: file ends inside the .npy preamble");
  size_t header_len = read_le(b, kMagicLen + 2, len_bytes);
  if (b.size() - prefix < header_len)
    throw Error(name + ": truncated: header length is " + std::to_string(header_len) + " bytes, file has " +
                std::to_string(b.size() - prefix));
  std::string header_text = b.substr(prefix, header_len);
  Header h = HeaderParser(header_text, name).parse();
  DType dt = dtype_from_descr(h.descr, name);
  if (h.fortran_order && h.shape.size() > 1) {
    // A Fortran-order array of rank <= 1 is laid out exactly as a C-order one.
    throw Error(name + ": Fortran-order arrays are not supported; save with np.ascontiguousarray(arr)");
  }

  // Bound the shape before computing byte counts or allocating anything (a zero extent does not
  // excuse the others: (2^61, 4, 0) has no elements, but its element count overflows on the way).
  if (!shape_within_limits(h.shape)) throw Error(name + ": shape " + shape_str(h.shape) + " is too large");
  const uint64_t numel = static_cast<uint64_t>(shape_numel(h.shape));
  uint64_t want = numel * dtype_size(dt);
  size_t data_start = prefix + header_len;
  uint64_t have = b.size() - data_start;
  if (have < want)
    throw Error(name + ": truncated: header says " + std::to_string(want) + " bytes, file has " +
                std::to_string(have));
  if (have > want)
    throw Error(name + ": " + std::to_string(have - want) + " unexpected bytes after the data (header says " +
                std::to_string(want) + " bytes)");

  Tensor t(dt, h.shape);
  if (want) std::memcpy(t.raw(), b.data() + data_start, want);
  if (dt == DType::boolean) {
    // Any non-zero byte is true; normalise so that reading as bool is well defined.
    auto* p = static_cast<uint8_t*>(t.raw());
    for (uint64_t i = 0; i < numel; ++i) p[i] = p[i] != 0;
  }
  return t;
}

Tensor read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a .npy file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error(path + ": read error");
  return read_bytes(ss.str(), path);
}

std::string to_bytes(const Tensor& t) {
  SY_CHECK(t.defined()) << "writing an undefined tensor";
  std::ostringstream dict;
  dict << "{'descr': '" << descr_of(t.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape().size(); ++i) dict << (i ? ", " : "") << t.shape()[i];
  if (t.shape().size() == 1) dict << ",";
  dict << "), }";
  std::string header = dict.str();
  // Pad with spaces and end with '\n' so that the data starts on a 64-byte boundary.
  size_t prefix = kMagicLen + 2 + 2;
  size_t total = prefix + header.size() + 1;
  int major = 1;
  if (((total + 63) / 64) * 64 - prefix > 65535) {
    major = 2;
    prefix += 2;
    total += 2;
  }
  size_t padded = ((total + 63) / 64) * 64;
  header.append(padded - total, ' ');
  header += '\n';

  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  size_t hl = header.size();
  for (size_t k = 0; k < (major == 1 ? 2u : 4u); ++k) out += static_cast<char>((hl >> (8 * k)) & 0xff);
  out += header;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  return out;
}

void write_file(const std::string& path, const Tensor& t) {
  std::string bytes = to_bytes(t);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(path + ": cannot write file: " + std::strerror(errno));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error(path + ": write failed: " + std::strerror(errno));
}

}  // namespace sy::npy
