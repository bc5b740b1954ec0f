// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0).
#pragma once
#include <string>

#include "support/tensor.h"

namespace sy::npy {

// Reads a little-endian, C-order array of dtype f4 f8 i1 i2 i4 i8 u1 b1. Throws sy::Error with
// a message that starts with `path` ("input.npy: truncated: header says 602112 bytes, file has
// 1000") for a missing file, a malformed header, Fortran order, big-endian data, an unsupported
// dtype, truncated data or bytes after the data.
Tensor read_file(const std::string& path);

// Same as read_file, for the bytes of a file; `name` prefixes error messages.
Tensor read_bytes(const std::string& bytes, const std::string& name);

// Encodes t as a version 1.0 file (2.0 only if the header would exceed 65535 bytes), with the
// header padded so that the data starts at a multiple of 64 bytes, as NumPy does.
std::string to_bytes(const Tensor& t);

// Writes to_bytes(t) to path; throws sy::Error naming the path if it cannot be written.
void write_file(const std::string& path, const Tensor& t);

}  // namespace sy::npy
