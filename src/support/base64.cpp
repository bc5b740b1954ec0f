// Base64 encoding and strict decoding.
#include "support/base64.h"

#include <array>

namespace sy {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> make_table() {
  std::array<int8_t, 256> t{};
  for (auto& x : t) x = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr std::array<int8_t, 256> kTable = make_table();

// Number of decoded bytes, or nullopt if the text is not a well-formed encoding.
std::optional<size_t> decoded_size(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  if (text.empty()) return 0;
  size_t pad = 0;
  if (text[text.size() - 1] == '=') ++pad;
  if (text[text.size() - 2] == '=') ++pad;
  if (pad == 1 && text[text.size() - 2] == '=') return std::nullopt;
  return text.size() / 4 * 3 - pad;
}

bool decode(std::string_view text, uint8_t* out, size_t n) {
  size_t groups = text.size() / 4;
  if (groups == 0) return n == 0;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  // All groups but the last decode to 3 bytes and hold no padding.
  size_t o = 0;
  for (size_t g = 0; g + 1 < groups; ++g, s += 4) {
    int a = kTable[s[0]], b = kTable[s[1]], c = kTable[s[2]], d = kTable[s[3]];
    if ((a | b | c | d) < 0) return false;
    uint32_t w = (uint32_t(a) << 18) | (uint32_t(b) << 12) | (uint32_t(c) << 6) | uint32_t(d);
    out[o++] = uint8_t(w >> 16);
    out[o++] = uint8_t(w >> 8);
    out[o++] = uint8_t(w);
  }
  size_t take = n - o;  // 1..3
  int v[4];
  for (int k = 0; k < 4; ++k) {
    if (s[k] == '=' && static_cast<size_t>(k) > take) {
      v[k] = 0;
      continue;
    }
    v[k] = kTable[s[k]];
    if (v[k] < 0) return false;
  }
  uint32_t w = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
  uint8_t b[3] = {uint8_t(w >> 16), uint8_t(w >> 8), uint8_t(w)};
  // Non-canonical encodings (non-zero bits beyond the data) are rejected so that decoding is
  // the exact inverse of encoding.
  for (size_t k = take; k < 3; ++k)
    if (b[k] != 0) return false;
  for (size_t k = 0; k < take; ++k) out[o++] = b[k];
  return true;
}

}  // namespace

size_t base64_encoded_size(size_t size) { return (size + 2) / 3 * 4; }

void base64_encode_to(const void* data, size_t size, char* out) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t o = 0, i = 0;
  for (; i + 3 <= size; i += 3) {
    uint32_t w = (uint32_t(p[i]) << 16) | (uint32_t(p[i + 1]) << 8) | p[i + 2];
    out[o++] = kAlphabet[(w >> 18) & 63];
    out[o++] = kAlphabet[(w >> 12) & 63];
    out[o++] = kAlphabet[(w >> 6) & 63];
    out[o++] = kAlphabet[w & 63];
  }
  if (i < size) {
    uint32_t w = uint32_t(p[i]) << 16;
    if (i + 1 < size) w |= uint32_t(p[i + 1]) << 8;
    out[o++] = kAlphabet[(w >> 18) & 63];
    out[o++] = kAlphabet[(w >> 12) & 63];
    out[o++] = i + 1 < size ? kAlphabet[(w >> 6) & 63] : '=';
    out[o++] = '=';
  }
}

std::string base64_encode(const void* data, size_t size) {
  std::string out(base64_encoded_size(size), '\0');
  base64_encode_to(data, size, out.data());
  return out;
}

bool base64_decode(std::string_view text, std::vector<uint8_t>& out) {
  auto n = decoded_size(text);
  if (!n) return false;
  out.resize(*n);
  return decode(text, out.data(), *n);
}

bool base64_decode_into(std::string_view text, void* dst, size_t size) {
  auto n = decoded_size(text);
  if (!n || *n != size) return false;
  return decode(text, static_cast<uint8_t*>(dst), size);
}

}  // namespace sy
