#include "app/cli/stopsignals.h"

#include <csignal>
#include <cstdlib>
#include <pthread.h>
#include <unistd.h>

#include "app/run/exitcodes.h"

namespace trainbench::cli {

namespace {
sigset_t stopSet() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    // A stop request relayed by mpirun, which forwards SIGUSR2 to an MPI job's ranks but turns SIGINT
    // into ending them (strategy.collective "mpi").
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGUSR1);  // used only to wake the waiter on shutdown
    return set;
}
}  // namespace

StopSignals::StopSignals() {
    sigset_t set = stopSet();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    waiter_ = std::thread([this, set] {
        for (;;) {
            int sig = 0;
            if (sigwait(&set, &sig) != 0) continue;
            if (sig == SIGUSR1) return;
            if (requested_.exchange(true)) {
                static const char msg[] = "\nstopping now\n";
                [[maybe_unused]] auto n = write(STDERR_FILENO, msg, sizeof msg - 1);
                std::_Exit(kExitStopped);
            }
        }
    });
}

StopSignals::~StopSignals() {
    pthread_kill(waiter_.native_handle(), SIGUSR1);
    waiter_.join();
}

}  // namespace trainbench::cli
