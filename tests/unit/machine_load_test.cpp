// MachineLoad: the CPU time another process takes while the tuner times a task counts, and a
// window too short to judge says so.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tune/machine_load.h"

namespace sy {
namespace {

TEST(MachineLoad, AnotherProcessSpinningCounts) {
  const tune::MachineLoad load;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    volatile unsigned long n = 0;
    for (;;) n = n + 1;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  // Before the child is waited for: its time is not this process's yet, as a stranger's is not.
  const double others = load.others_cpus();
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  // About one CPU (other tests running beside this one add to it; the machine has no more than
  // its CPUs to give).
  EXPECT_GT(others, 0.5);
  EXPECT_LE(others, static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)) + 0.2);
}

TEST(MachineLoad, AWindowTooShortIsUnknown) {
  const tune::MachineLoad load;
  EXPECT_LT(load.others_cpus(), 0);
}

}  // namespace
}  // namespace sy
