#pragma once
// Measures the roofline's roofs on this host: peak fp32 compute (a large oneDNN matmul) and memory
// bandwidth (a STREAM-like triad over arrays far larger than the last-level cache). Roofs are
// maxima, so each is the best of several repetitions: anything else running only lowers them.
// machinecache.h keeps the result per host and thread count in the run store.
#include <string>

#include "profiler/machine/machineinfo.h"

namespace trainbench::profiler {

// Measures both roofs with `threads` OpenMP threads (0: every core, as engine::CpuDevice counts
// them; the result records the resolved count). Takes well under 2 s and about 4x the L3 cache
// in memory (at most 768 MiB), freed before it returns.
//
// Runs on the calling thread and leaves that thread's OpenMP budget at `threads` (it calls
// engine::bindComputeThreads): it is meant for the start of a run, on the thread that trains with
// the same budget, so nothing is restored. Other work on the machine (another run, a build) lowers
// the figures; machinecache.h serialises calibrations between trainbench processes.
MachineRoofs measureRoofs(int threads);

// This host's name as the run store records it (runs.host, machines.host); cheap.
std::string currentHost();

// Now, in the store's timestamp format ("2024-05-01T12:34:56.789Z"), so it sorts with started_at.
std::string utcNow();

// The thread count measureRoofs() and the cache use for `threads` (0: every core).
int resolveThreads(int threads);

}  // namespace trainbench::profiler
