#include "tune/machine_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace sy::tune {

namespace {

// Shorter windows hold too few clock ticks (10 ms each) to tell noise from load.
constexpr double kMinWindowSeconds = 0.2;

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; }

}  // namespace

MachineLoad::MachineLoad() : start_(now()) {}

MachineLoad::Sample MachineLoad::now() {
  Sample s;
  s.at = std::chrono::steady_clock::now();
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  s.own_s = seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime);
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice", in clock ticks summed
  // over the CPUs; guest time is inside user time already.
  std::ifstream stat("/proc/stat");
  std::string line, label;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (!stat || !std::getline(stat, line) || ticks <= 0) return s;
  std::istringstream in(line);
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq) || label != "cpu") return s;
  in >> steal;  // absent on old kernels
  s.busy_s = static_cast<double>(user + nice + system + irq + softirq + steal) / static_cast<double>(ticks);
  return s;
}

double MachineLoad::others_cpus() const {
  const Sample end = now();
  const double wall = std::chrono::duration<double>(end.at - start_.at).count();
  if (start_.busy_s < 0 || end.busy_s < 0 || wall < kMinWindowSeconds) return -1;
  const double others = (end.busy_s - start_.busy_s) - (end.own_s - start_.own_s);
  return others > 0 ? others / wall : 0;
}

}  // namespace sy::tune
