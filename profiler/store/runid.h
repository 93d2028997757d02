#pragma once
// Identifies a run in the run store: the runs.id primary key. A strong type so a run id is never
// confused with a step number, a pid or a row count.
#include <cstdint>

namespace trainbench::profiler {

struct RunId {
    int64_t value = 0;

    friend bool operator==(RunId, RunId) = default;
};

}  // namespace trainbench::profiler
