// What the oneDNN extern implementations share: the site's buffers as oneDNN dims, errors
// written into init's message, the weight packed by topi::pack_weight unpacked to plain.
#pragma once
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "switchyard/extern_abi.h"

namespace sy::externs::onednn {

inline dnnl::memory::dims dims_of(const sy_extern_site& s, int buffer) {
  return dnnl::memory::dims(s.shapes[buffer], s.shapes[buffer] + s.ranks[buffer]);
}

inline dnnl::engine& cpu_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// Runs f() and returns its state; on an exception, writes its message into err and returns null.
template <typename F>
void* init_or_explain(char* err, size_t err_size, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    std::snprintf(err, err_size, "%s", e.what());
  }
  return nullptr;
}

// A weight packed in blocks of B output rows ([ceil(O/B), rest..., B], zero-padded; see
// topi::pack_weight) back to [O, rest...].
inline std::vector<float> unpack_rows(const float* packed, int64_t O, int64_t rest, int64_t B) {
  std::vector<float> w(static_cast<size_t>(O * rest));
  for (int64_t o = 0; o < O; ++o)
    for (int64_t r = 0; r < rest; ++r) w[static_cast<size_t>(o * rest + r)] = packed[((o / B) * rest + r) * B + o % B];
  return w;
}

std::string library_version();

}  // namespace sy::externs::onednn
