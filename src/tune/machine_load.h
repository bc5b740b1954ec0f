// What other processes took of the machine while the tuner timed a task. A timing made while
// another process runs is not what the kernel costs in the model alone: a parallel kernel waits at
// its barrier for a thread the scheduler gave away (MobileNetV3's 0.03 ms 1x1 convs took 8 ms a
// run, every run, while another 2-thread process ran), and its record would choose by that.
#pragma once

#include <chrono>

namespace sy::tune {

class MachineLoad {
 public:
  // Starts a window now.
  MachineLoad();
  // CPUs' worth of time that other processes, and on a VM the host's other guests (steal time),
  // took on average since the window started: 0 none, the number of CPUs all of them. This
  // process and the children it has waited for do not count. Negative when unknown (no
  // /proc/stat, or a window too short to judge).
  double others_cpus() const;

 private:
  struct Sample {
    double busy_s = -1;  // every CPU's busy and stolen time, from /proc/stat
    double own_s = 0;    // this process's CPU time and its waited-for children's
    std::chrono::steady_clock::time_point at;
  };
  static Sample now();
  Sample start_;
};

}  // namespace sy::tune
