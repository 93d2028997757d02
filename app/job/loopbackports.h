#pragma once
// Addresses for the tasks of a job on this machine.
#include <vector>

namespace trainbench::app {

// Free TCP ports on loopback, held open together so that they differ, then released for the tasks.
// Throws std::runtime_error when the system has none to give.
std::vector<int> freeLoopbackPorts(int n);

}  // namespace trainbench::app
