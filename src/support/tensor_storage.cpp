// Tensor storage (see tensor_storage.h).
#include "support/tensor_storage.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace sy {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

thread_local StorageLifetime t_lifetime = StorageLifetime::transient;

// An anonymous mapping of `len` bytes (a multiple of 4 KB) starting at a 2 MB boundary, so that
// each whole 2 MB of it can be one huge page; the tail of the last 2 MB stays in 4 KB pages (no
// memory is added by rounding up).
void* map_huge_aligned(size_t len) {
  void* raw = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  size_t head = aligned - start;  // the slack before the block; the rest of 2 MB is after it
  if (head) ::munmap(raw, head);
  ::munmap(reinterpret_cast<void*>(aligned + len), kHugePage - head);
  // Advice only: where transparent huge pages are off, this fails and 4 KB pages are used.
  ::madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

std::shared_ptr<uint8_t[]> allocate_tensor_storage(size_t bytes, bool zeroed, StorageLifetime lifetime) {
  if (lifetime == StorageLifetime::long_lived && bytes >= kHugePage) {
    size_t len = (bytes + kPage - 1) / kPage * kPage;
    void* p = map_huge_aligned(len);
    if (!p) throw std::bad_alloc();
    return std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(p), [len](uint8_t* q) { ::munmap(q, len); });
  }
  size_t alloc = (bytes + 63) / 64 * 64;
  if (alloc == 0) alloc = 64;
  void* p = std::aligned_alloc(64, alloc);
  if (!p) throw std::bad_alloc();
  if (zeroed) std::memset(p, 0, alloc);
  return std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

LongLivedTensors::LongLivedTensors() : previous_(t_lifetime) { t_lifetime = StorageLifetime::long_lived; }
LongLivedTensors::~LongLivedTensors() { t_lifetime = previous_; }

StorageLifetime current_tensor_lifetime() { return t_lifetime; }

}  // namespace sy
