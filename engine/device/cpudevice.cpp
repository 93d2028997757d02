#include "engine/device/cpudevice.h"

#include <omp.h>
#include <thread>

namespace trainbench::engine {

CpuDevice::CpuDevice(int threads)
    : engine_(dnnl::engine::kind::cpu, 0),
      stream_(engine_),
      threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
    bindThreads();
}

void CpuDevice::bindThreads() const { omp_set_num_threads(threads_); }

}  // namespace trainbench::engine
