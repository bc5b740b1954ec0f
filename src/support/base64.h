// Base64 (RFC 4648, standard alphabet, '=' padding) for embedding binary data in text.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sy {

std::string base64_encode(const void* data, size_t size);
// Writes exactly base64_encoded_size(size) characters to dst (for encoding into a larger buffer).
void base64_encode_to(const void* data, size_t size, char* dst);
// Length of the encoding of `size` bytes.
size_t base64_encoded_size(size_t size);
// Decodes into out (resized); returns false on a character outside the alphabet, bad padding or
// a length that is not a multiple of 4. Whitespace is not allowed.
bool base64_decode(std::string_view text, std::vector<uint8_t>& out);
// Decodes into a caller-provided buffer of exactly the decoded size; false on malformed input or
// if the decoded size is not `size`.
bool base64_decode_into(std::string_view text, void* dst, size_t size);

}  // namespace sy
