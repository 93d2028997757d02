#include "profiler/machine/memoryprobe.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/emulation/footprint.h"
#include "engine/model/model.h"

namespace trainbench::profiler {

namespace {

constexpr double kFloatBytes = 4.0;

// The number after `key` on its line of a /proc file ("VmHWM:   123 kB", "pswpin 42"), or -1.
int64_t procValue(const char* file, std::string_view key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size(), key) != 0) continue;
        std::istringstream rest(line.substr(key.size()));
        int64_t value = -1;
        rest >> value;
        return value;
    }
    return -1;
}

}  // namespace

int64_t peakRssBytes() {
    const int64_t kib = procValue("/proc/self/status", "VmHWM:");
    return kib > 0 ? kib * 1024 : 0;
}

bool resetPeakRss() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

int64_t hostMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0) return static_cast<int64_t>(pages) * pageSize;
    const int64_t kib = procValue("/proc/meminfo", "MemTotal:");
    return kib > 0 ? kib * 1024 : 0;
}

int64_t lastLevelCacheBytes() {
    int bestLevel = 0;
    int64_t bestBytes = 0;
    for (int index = 0; index < 16; ++index) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
        std::ifstream levelFile(dir + "level"), typeFile(dir + "type"), sizeFile(dir + "size");
        int level = 0;
        std::string type, size;
        if (!(levelFile >> level) || !(typeFile >> type) || !(sizeFile >> size)) continue;
        if (type == "Instruction" || level < bestLevel) continue;
        // "32768K", "1M" or a plain number of bytes.
        int64_t bytes = 0;
        size_t used = 0;
        try {
            bytes = std::stoll(size, &used);
        } catch (const std::exception&) {
            continue;
        }
        const char unit = used < size.size() ? size[used] : ' ';
        if (unit == 'K' || unit == 'k') bytes *= 1024;
        else if (unit == 'M' || unit == 'm') bytes *= 1024 * 1024;
        else if (unit == 'G' || unit == 'g') bytes *= int64_t{1024} * 1024 * 1024;
        if (bytes <= 0) continue;
        bestLevel = level;
        bestBytes = bytes;
    }
    if (bestBytes > 0) return bestBytes;
    for (const int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        const long bytes = sysconf(name);
        if (bytes > 0) return bytes;
    }
    return 0;
}

int64_t swapPages() {
    const int64_t in = procValue("/proc/vmstat", "pswpin ");
    const int64_t out = procValue("/proc/vmstat", "pswpout ");
    return (in > 0 ? in : 0) + (out > 0 ? out : 0);
}

int64_t majorFaults() {
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return static_cast<int64_t>(usage.ru_majflt);
}

double optimizerStateFloatsPerParam(const engine::OptimizerConfig& config) {
    return engine::optimizerStateFloatsPerParam(config);
}

MemoryFootprint footprintOf(const engine::Model& model, int64_t batch,
                            double optimizerStateFloatsPerParam, double deviceMemoryBytes) {
    if (batch <= 0) throw std::invalid_argument("memory footprint: batch must be positive, got " + std::to_string(batch));
    MemoryFootprint footprint;
    const double params = static_cast<double>(model.paramCount());
    footprint.params_bytes = params * kFloatBytes;
    footprint.grads_bytes = params * kFloatBytes;  // one gradient buffer, as large as the parameters
    footprint.optimizer_bytes = params * optimizerStateFloatsPerParam * kFloatBytes;
    footprint.activation_bytes =
        static_cast<double>(batch) * engine::activationFloatsPerExample(model.layers(), model.sampleShape()) * kFloatBytes;
    if (deviceMemoryBytes > 0.0) {
        footprint.device_bytes = deviceMemoryBytes;
        footprint.device_source = "device.memory_mb";
    } else {
        footprint.device_bytes = static_cast<double>(hostMemoryBytes());
        footprint.device_source = "host RAM";
    }
    return footprint;
}

}  // namespace trainbench::profiler
