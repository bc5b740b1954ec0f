// Registration of the oneDNN extern implementations, and what they share.
#include "externs/onednn/onednn_externs.h"

#include <stdexcept>

#include "externs/onednn/onednn_extern_util.h"

namespace sy::externs {

namespace onednn {

std::string library_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

void check_site(const sy_extern_site& s, int min_buffers, int max_buffers, int attrs, const char* what) {
  if (s.num_buffers < min_buffers || s.num_buffers > max_buffers || s.num_attrs != attrs)
    throw std::runtime_error(std::string(what) + ": unexpected site (" + std::to_string(s.num_buffers) + " buffers, " +
                             std::to_string(s.num_attrs) + " attributes)");
  for (int i = 0; i < s.num_buffers; ++i)
    if (s.dtypes[i] != SY_EXTERN_F32 || s.ranks[i] < 1 || s.ranks[i] > 6)
      throw std::runtime_error(std::string(what) + ": buffer " + std::to_string(i) + " is not an f32 tensor of rank 1..6");
}

void* run_buffer(int slot, size_t bytes) {
  struct Buffers {
    void* p[kNumRunSlots] = {};
    size_t size[kNumRunSlots] = {};
    ~Buffers() {
      for (void* x : p) std::free(x);
    }
  };
  thread_local Buffers b;
  if (bytes > b.size[slot]) {
    std::free(b.p[slot]);
    b.size[slot] = (bytes + 63) / 64 * 64;
    b.p[slot] = std::aligned_alloc(64, b.size[slot]);
    if (!b.p[slot]) {
      b.size[slot] = 0;
      throw std::bad_alloc();
    }
  }
  return b.p[slot];
}

}  // namespace onednn

void register_onednn_externs() {
  onednn::register_conv2d();
  onednn::register_matmul();
  onednn::register_pool2d();
}

}  // namespace sy::externs
