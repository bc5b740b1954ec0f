// How fast data moves between the first two CPUs this process may run on, in ~20 ms: a 512 KB
// buffer written by one core and then read by the other (cross-core read), and written again by
// the first after the other read it (each line then has a copy in the other core's cache to
// invalidate). On the 2-vCPU guests we measure on, these swing 3x from minute to minute as the
// host places the two vCPUs on nearby or distant cores (78 against 26 GB/s cross-core read, 24
// against 7 GB/s write), and every 2-thread latency swings with them (DenseNet's concatenations
// took 1.0 or 3.3 ms). bench/run runs this around each round to say which placement a number
// was measured in. Prints one JSON object.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr size_t kBytes = 512 * 1024;
constexpr int kIters = 300;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

bool pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s) == 0;
}

}  // namespace

int main() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    std::fprintf(stderr, "cross_core_probe: cannot read the CPU affinity\n");
    return 1;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.size() < 2) {
    std::printf("{\"cpus\": %zu}\n", cpus.size());  // one CPU: nothing crosses
    return 0;
  }
  std::vector<float> storage(kBytes / sizeof(float));
  float* buf = storage.data();
  const size_t n = kBytes / sizeof(float);
  if (!pin(cpus[0])) {
    std::fprintf(stderr, "cross_core_probe: cannot pin to CPU %d\n", cpus[0]);
    return 1;
  }
  std::atomic<int> turn{0};
  std::atomic<bool> other_pinned{false};
  double read_s = 0, write_s = 0;
  std::thread other([&] {
    other_pinned = pin(cpus[1]);
    for (int i = 0; i < kIters; ++i) {
      while (turn.load(std::memory_order_acquire) != 1) {
      }
      const double t = now();
      float s = 0;
      for (size_t j = 0; j < n; j += 16) s += buf[j];  // one read per 64-byte line
      asm volatile("" : : "r"(s) : "memory");          // the sum is used: the reads happen
      read_s += now() - t;
      turn.store(0, std::memory_order_release);
    }
  });
  for (int i = 0; i < kIters; ++i) {
    while (turn.load(std::memory_order_acquire) != 0) {
    }
    const double t = now();
    for (size_t j = 0; j < n; ++j) buf[j] = static_cast<float>(i);
    asm volatile("" : : "r"(buf) : "memory");  // the stores happen before the clock is read
    if (i > 0) write_s += now() - t;  // the first write finds no copy in the other core
    turn.store(1, std::memory_order_release);
  }
  while (turn.load(std::memory_order_acquire) != 0) {
  }
  other.join();
  if (!other_pinned) {  // the two threads may have shared one CPU: nothing was measured across
    std::fprintf(stderr, "cross_core_probe: cannot pin to CPU %d\n", cpus[1]);
    return 1;
  }
  const double gb = static_cast<double>(kBytes) / 1e9;
  std::printf("{\"cpus\": [%d, %d], \"cross_core_read_gbps\": %.1f, \"write_after_remote_read_gbps\": %.1f}\n", cpus[0],
              cpus[1], gb * kIters / read_s, gb * (kIters - 1) / write_s);
  return 0;
}
