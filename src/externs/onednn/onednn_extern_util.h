// What the oneDNN extern implementations share: the site's buffers as oneDNN dims, errors
// written into init's message, per-thread run buffers, and primitives kept per thread count.
#pragma once
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "externs/onednn/onednn_externs.h"
#include "support/tensor_storage.h"
#include "switchyard/extern_abi.h"
#include "topi/topi.h"

namespace sy::externs::onednn {

inline dnnl::memory::dims dims_of(const sy_extern_site& s, int buffer) {
  return dnnl::memory::dims(s.shapes[buffer], s.shapes[buffer] + s.ranks[buffer]);
}

// Activations are NCHW (rank 4) or channel-blocked [N, C/B, H, W, B] (rank 5: oneDNN's nChw<B>c
// for B = 4, 8 or 16; or NHWC, [N, 1, H, W, C], when the call says so), as a target hook keeps
// them between its primitives.
inline dnnl::memory::dims logical_dims(const sy_extern_site& s, int buffer) {
  dnnl::memory::dims d = dims_of(s, buffer);
  if (d.size() == 5) return {d[0], d[1] * d[4], d[2], d[3]};
  return d;
}

// NCHW dims `d` as NCHW (block 0), channel-blocked by `block`, or NHWC (kNhwcBlock).
inline dnnl::memory::desc activation_desc(const dnnl::memory::dims& d, int64_t block) {
  using tag = dnnl::memory::format_tag;
  if (block == 0) return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag::nchw);
  if (block == kNhwcBlock) return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag::nhwc);
  switch (block) {
    case 16: return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag::nChw16c);
    case 8: return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag::nChw8c);
    case 4: return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag::nChw4c);
    default: throw std::runtime_error("a channel block of " + std::to_string(block) + " (4, 8 or 16)");
  }
}

// `nhwc`: a rank-5 buffer is [N, 1, H, W, C].
inline dnnl::memory::desc activation_desc(const sy_extern_site& s, int buffer, bool nhwc = false) {
  if (nhwc && s.ranks[buffer] == 5 && s.shapes[buffer][1] != 1)
    throw std::runtime_error("an NHWC buffer of more than one block");
  return activation_desc(logical_dims(s, buffer), s.ranks[buffer] == 4 ? 0 : nhwc ? kNhwcBlock : s.shapes[buffer][4]);
}

// Never destroyed: states freed during static destruction must not outlive it.
inline dnnl::engine& cpu_engine() {
  static auto* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

// Memory for a constant (a weight) in a primitive's layout, kept for the life of the state:
// long-lived storage (2 MB pages where the kernel grants them, as the native weights and the BYOC
// backend's have), not oneDNN's own allocation in 4 KB pages. ResNet-50 streams 100 MB of weights
// per inference; in 4 KB pages its convolutions ran ~3% slower than the same primitives in BYOC.
struct ConstantMemory {
  std::shared_ptr<uint8_t[]> storage;
  dnnl::memory mem;
};
inline ConstantMemory constant_memory(const dnnl::memory::desc& d) {
  ConstantMemory c;
  c.storage = allocate_tensor_storage(d.get_size(), false, StorageLifetime::long_lived);
  c.mem = dnnl::memory(d, cpu_engine(), c.storage.get());
  return c;
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

// The site's buffers are f32 of the expected ranks (a library built against another build's
// site table, or a corrupted one, is refused at init rather than read out of bounds).
void check_site(const sy_extern_site& s, int min_buffers, int max_buffers, int attrs, const char* what);

// topi::unpack_rows into a new vector.
inline std::vector<float> unpack_rows(const float* packed, int64_t rows, int64_t rest, int64_t block) {
  std::vector<float> w(static_cast<size_t>(rows * rest));
  topi::unpack_rows(packed, rows, rest, block, w.data());
  return w;
}

// Memory a run needs beside its buffers (oneDNN's scratchpad, blocked copies of the activations),
// per calling thread: concurrent runs of one state never share it, and a run allocates nothing
// once its thread has run the largest site.
void* run_buffer(int slot, size_t bytes);
inline dnnl::memory run_memory(const dnnl::memory::desc& d, int slot) {
  return dnnl::memory(d, cpu_engine(), run_buffer(slot, d.get_size()));
}
enum RunSlot { kScratchpad, kReorderScratchpad, kSrc, kDst, kWeights, kNumRunSlots };

// A reorder with a user scratchpad (like every primitive here: executed by any thread).
struct Reorder {
  dnnl::reorder prim;
  dnnl::memory::desc scratch;
  explicit operator bool() const { return static_cast<bool>(prim); }
};
inline Reorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, attr);
  return {dnnl::reorder(pd), pd.scratchpad_desc()};
}
inline void run_reorder(const Reorder& r, const dnnl::stream& st, dnnl::memory& from, dnnl::memory& to) {
  r.prim.execute(st, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}, {DNNL_ARG_SCRATCHPAD, run_memory(r.scratch, kReorderScratchpad)}});
}

// A constant weight in the layouts its primitives want, held once per distinct layout. The
// model's copy is valid only during init (extern_abi.h): the first layout is made from a plain
// copy then, and release_plain() drops that copy once the first primitive has its weight; a
// primitive made later (for another thread count) shares a layout already made or reorders the
// first one. Without this a state kept the plain copy for its whole life beside the reordered one
// (ResNet-50's 100 MB of weights held twice by the hook, three times with the plan's own).
class ConstantWeights {
 public:
  // At init: the constant, plain, in layout `user`.
  void hold_plain(const dnnl::memory::desc& user, std::vector<float> plain) {
    user_ = user;
    plain_ = std::move(plain);
    constant_ = true;
  }
  void release_plain() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!layouts_.empty()) std::vector<float>().swap(plain_);
  }
  bool constant() const { return constant_; }
  // The constant in layout `want`.
  dnnl::memory in(const dnnl::memory::desc& want) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const ConstantMemory& l : layouts_)
      if (l.mem.get_desc() == want) return l.mem;
    ConstantMemory made = constant_memory(want);
    dnnl::memory from = !plain_.empty() ? dnnl::memory(user_, cpu_engine(), const_cast<float*>(plain_.data()))
                                        : layouts_.at(0).mem;
    dnnl::stream st(cpu_engine());
    run_reorder(make_reorder(from.get_desc(), want), st, from, made.mem);
    st.wait();
    layouts_.push_back(made);
    return made.mem;
  }

 private:
  bool constant_ = false;
  dnnl::memory::desc user_;
  std::vector<float> plain_;
  mutable std::mutex mu_;
  mutable std::vector<ConstantMemory> layouts_;
};

// oneDNN primitives partition their work for the thread count they are made with, so a state
// keeps one set per thread count (made at init for the current one; later ones on first use).
template <typename Prims>
class PerThreads {
 public:
  template <typename Make>
  const Prims& get(const Make& make) const {
    const int n = omp_get_max_threads();
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = by_threads_.find(n);
      if (it != by_threads_.end()) return *it->second;
    }
    // Made outside the lock (it reorders the weight): runs at other thread counts go on.
    auto made = std::make_unique<Prims>(make());
    std::lock_guard<std::mutex> lock(mu_);
    return *by_threads_.emplace(n, std::move(made)).first->second;  // kept: the first one made
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<int, std::unique_ptr<Prims>> by_threads_;
};

// A primitive's arguments for one calling thread, made on its first call: later calls only set
// the data handles. Making the memory objects, the map and the stream anew cost about 4 us a call
// (0.2 ms a run of ResNet-50's 53 convolutions through the hook, 0.7% of it). Kept per thread, so
// concurrent runs of one state never share them.
struct BoundArgs {
  dnnl::stream stream;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::memory& operator[](int arg) { return args.at(arg); }
  void set(int arg, void* data) { args.at(arg).set_data_handle(data); }
};
// A memory object of `d` with no data yet (BoundArgs::set gives it its buffer per call).
inline dnnl::memory unbound(const dnnl::memory::desc& d) { return dnnl::memory(d, cpu_engine(), nullptr); }

class PerCaller {
 public:
  // The calling thread's arguments for the primitive set `prims` (made by make(), a map of the
  // arguments, on first use or when the thread count chose another set).
  template <typename Make>
  BoundArgs& get(const void* prims, const Make& make) const {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& s = by_thread_[std::this_thread::get_id()];
    if (!s.args || s.prims != prims) {
      s.args = std::make_unique<BoundArgs>(BoundArgs{dnnl::stream(cpu_engine()), make()});
      s.prims = prims;
    }
    return *s.args;
  }

 private:
  struct Slot {
    const void* prims = nullptr;
    std::unique_ptr<BoundArgs> args;
  };
  mutable std::mutex mu_;
  mutable std::map<std::thread::id, Slot> by_thread_;
};

std::string library_version();

}  // namespace sy::externs::onednn
