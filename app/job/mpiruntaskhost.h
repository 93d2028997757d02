#pragma once
// A multi_worker job whose processes exchange gradients over Open MPI (strategy.collective "mpi"):
// MPI's ranks can only be wired up by an MPI launcher, so the job supervisor's one task is `mpirun`,
// which starts the ranks (each a `trainbench-cli worker`, its place in the job its MPI rank). What
// the supervisor does to its task reaches the ranks through mpirun:
//   * a stop request (SIGINT) goes as SIGUSR2, which mpirun forwards to every rank (it would end
//     them on SIGINT); SIGTERM and SIGKILL end mpirun, and the ranks die with it (PR_SET_PDEATHSIG);
//   * a rank that dies makes mpirun end the others and exit with an error; the line in which mpirun
//     names that rank ("process rank 1 with PID ... exited on signal 9") is kept for the failure;
//   * the job's identity in the run store is rank 0's (the chief's run), found among mpirun's children;
//   * the task counts as stopped when mpirun or any rank is (SIGSTOP, a debugger).
// mpirun's standard error is copied to this process's, line by line.
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/job/processtaskhost.h"

namespace trainbench::app {

class MpirunTaskHost final : public TaskHost {
public:
    // `ranks`: the job's processes. `commandFor` builds one rank's command (every rank runs the same
    // one); this host runs it under mpirun.
    MpirunTaskHost(int ranks, ProcessTaskHost::CommandFor commandFor);
    ~MpirunTaskHost() override;

    pid_t start(const TaskStart& start) override;
    profiler::ProcessIdentity identity(pid_t pid) override;
    void signal(pid_t pid, int sig) override;
    bool stopped(pid_t pid) override;
    std::optional<TaskExit> waitForExit(Clock::time_point deadline) override;
    void reap(pid_t pid) override;
    Clock::time_point now() override { return Clock::now(); }
    std::string detail(pid_t pid) override;

    // mpirun's command line for a rank's command (for tests and launch scripts): options, then the command.
    static std::vector<std::string> mpirunArgv(int ranks, const std::vector<std::string>& rankArgv, bool asRoot);

private:
    // The ranks mpirun has started so far (its children), by rank.
    std::vector<pid_t> rankPids(pid_t mpirun) const;
    void readErrors(int fd);

    int ranks_;
    ProcessTaskHost::CommandFor commandFor_;
    std::thread reader_;
    std::mutex mu_;
    std::vector<std::string> rankFailures_;  // mpirun's lines naming a rank that failed
    std::vector<pid_t> seenPids_;            // each rank's pid, as last seen among mpirun's children
};

}  // namespace trainbench::app
