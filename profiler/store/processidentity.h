#pragma once
// Who is writing a run: enough to tell later, from another process, whether that writer is still
// alive. A pid alone is not enough (pids are reused), so the process start time from
// /proc/<pid>/stat and the kernel's boot id are kept with it.
#include <cstdint>
#include <optional>
#include <string>

namespace trainbench::profiler {

struct ProcessIdentity {
    std::string host;                    // gethostname()
    int64_t pid = 0;
    std::optional<int64_t> proc_start;   // /proc/<pid>/stat field 22, clock ticks since boot
    std::optional<std::string> boot_id;  // /proc/sys/kernel/random/boot_id

    // The calling process.
    static ProcessIdentity current();

    // Start time of a live process (field 22 of /proc/<pid>/stat); std::nullopt when there is
    // no such process or it is a zombie (exited, not yet reaped: it will never write again).
    static std::optional<int64_t> startTimeOf(int64_t pid);

    // Whether process pid on this machine, boot included, is still the one that started at
    // procStart (if known). Without /proc it falls back to kill(pid, 0).
    static bool isAlive(int64_t pid, std::optional<int64_t> procStart);
};

}  // namespace trainbench::profiler
