#pragma once
// What the crash loop remembers from one check to the next (a small text file, key=value per
// line): the newest run already checked, each checked run's final status and step count (nothing
// committed may be lost later), and the checkpoint seen last (the next one must be it or a newer
// run's whole file).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace trainbench::crashloop {

struct CheckpointPrint {
    uint64_t bytes = 0;
    uint32_t crc = 0;  // CRC-32C of the whole file
    int64_t run = 0;   // metadata run_id
    int64_t step = 0;  // metadata step

    friend bool operator==(const CheckpointPrint&, const CheckpointPrint&) = default;
};

struct RunSeen {
    std::string status;
    int64_t steps = 0;
    int64_t evals = 0;
};

struct CrashState {
    int64_t lastRun = 0;
    std::map<int64_t, RunSeen> runs;
    std::optional<CheckpointPrint> checkpoint;

    // An absent file is the empty state (the first check). Throws std::runtime_error on a bad line.
    static CrashState load(const std::string& path);
    void save(const std::string& path) const;
};

std::string describe(const CheckpointPrint& p);

}  // namespace trainbench::crashloop
