#pragma once
// Processes of MPI jobs started by a test (mpirun and its ranks) inherit the test's environment.
// Under AddressSanitizer (the dev preset) Open MPI's own never-freed allocations would be reported
// as leaks of every rank, and with stacks too shallow to tell whose: the ranks get the slow unwinder
// and tests/sanitizers/openmpi.supp, which names Open MPI's libraries only. Call before starting a job.
#include <cstdlib>
#include <string>

namespace trainbench::testing {

inline void prepareMpiUnderSanitizers() {
#if defined(__SANITIZE_ADDRESS__)
    static const bool done = [] {
        const char* asan = std::getenv("ASAN_OPTIONS");
        const std::string options = std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "fast_unwind_on_malloc=0";
        ::setenv("ASAN_OPTIONS", options.c_str(), 1);
        ::setenv("LSAN_OPTIONS",
                 "suppressions=" TRAINBENCH_SOURCE_DIR "/tests/sanitizers/openmpi.supp:fast_unwind_on_malloc=0", 1);
        return true;
    }();
    (void)done;
#endif
}

}  // namespace trainbench::testing
