#pragma once
// Names the calling thread (up to 15 characters) so that top -H, gdb and perf tell the engine's
// threads apart: tb-read, tb-map, tb-prefetch, tb-replica1, tb-allreduce ...
#include <pthread.h>

#include "engine/instrument/instrument.h"

namespace trainbench::engine {

// Also the thread's name in profiler traces.
inline void setThreadName(const char* name) {
    pthread_setname_np(pthread_self(), name);
    prof::setThreadName(name);
}

}  // namespace trainbench::engine
