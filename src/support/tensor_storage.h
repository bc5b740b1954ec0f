// Storage for tensors (64-byte aligned), by how long it lives:
//  - transient (the default): malloc, which reuses freed memory for a run's intermediates;
//  - long-lived (a model's weights: imported, prepacked, loaded from an artifact; the native
//    executable's arena): blocks of 2 MB and more get an anonymous mapping of their own, 2 MB
//    aligned and advised onto transparent huge pages.
//
// Why: every 4 KB page first touched costs a page fault, and on a VM a fault costs ~10-20 us.
// Writing ResNet-50's 100 MB of weights into fresh tensors took ~0.3 s of page faults that way
// (twice per compile: imported, then prepacked); with 2 MB pages it is ~50 faults. Transient
// tensors stay with malloc: a fresh mapping per run's intermediate would fault every time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace sy {

enum class StorageLifetime { transient, long_lived };

// At least `bytes` bytes, zero-filled if `zeroed` (free for fresh mappings: they read as zeros).
std::shared_ptr<uint8_t[]> allocate_tensor_storage(size_t bytes, bool zeroed, StorageLifetime lifetime);

// While one exists on the calling thread, new Tensors get long-lived storage. Code that builds a
// model's weights says so around it: the importer, prepacking, artifact loading.
class LongLivedTensors {
 public:
  LongLivedTensors();
  ~LongLivedTensors();
  LongLivedTensors(const LongLivedTensors&) = delete;
  LongLivedTensors& operator=(const LongLivedTensors&) = delete;

 private:
  StorageLifetime previous_;
};

// What new Tensors get on this thread (long_lived inside a LongLivedTensors scope).
StorageLifetime current_tensor_lifetime();

}  // namespace sy
