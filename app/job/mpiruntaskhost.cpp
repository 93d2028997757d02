#include "app/job/mpiruntaskhost.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace trainbench::app {

namespace {

// The path of `name` on PATH, or empty.
std::string onPath(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

// The MPI rank a process was started as (OMPI_COMM_WORLD_RANK in its environment), or -1.
int mpiRankOf(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    constexpr std::string_view kKey = "OMPI_COMM_WORLD_RANK=";
    for (std::string entry; std::getline(f, entry, '\0');)
        if (entry.rfind(kKey, 0) == 0) return std::atoi(entry.c_str() + kKey.size());
    return -1;
}

// Whether a line of mpirun's (or a rank's) standard error says which rank failed and how.
bool namesFailedRank(const std::string& line) {
    return line.find("process rank") != std::string::npos || line.find("Process name:") != std::string::npos ||
           line.find("Exit code:") != std::string::npos ||
           (line.rfind("rank ", 0) == 0 && line.find(": MPI ") != std::string::npos);
}

}  // namespace

MpirunTaskHost::MpirunTaskHost(int ranks, ProcessTaskHost::CommandFor commandFor)
    : ranks_(ranks), commandFor_(std::move(commandFor)) {}

MpirunTaskHost::~MpirunTaskHost() {
    if (reader_.joinable()) reader_.join();  // ends when mpirun's standard error closes
}

std::vector<std::string> MpirunTaskHost::mpirunArgv(int ranks, const std::vector<std::string>& rankArgv, bool asRoot) {
    // --bind-to none: a rank's compute threads (strategy.threads_per_replica) are placed by its own
    // thread pool, not pinned to one core. --oversubscribe: more ranks than cores is the user's call.
    // mpi_yield_when_idle: a rank waiting in a collective yields its core. A rank's communication thread
    // reduces gradients while its compute thread runs backward, so a job's threads usually outnumber
    // the cores, and busy polling would take them from the computation.
    // btl self,vader: the ranks of a job on this machine move data through shared memory only, and
    // open no ports (Open MPI's TCP transport would listen on every interface); oob_tcp_if_include lo:
    // mpirun's own out-of-band channel stays on loopback (docs/security.md: what mpirun still opens).
    std::vector<std::string> argv{"mpirun",  "-np",   std::to_string(ranks), "--bind-to", "none",
                                  "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
                                  "--mca",   "btl",   "self,vader",          "--mca",     "oob_tcp_if_include",
                                  "lo"};
    if (asRoot) argv.emplace_back("--allow-run-as-root");  // Open MPI refuses root otherwise (containers, CI)
    argv.insert(argv.end(), rankArgv.begin(), rankArgv.end());
    return argv;
}

pid_t MpirunTaskHost::start(const TaskStart& start) {
    const TaskCommand rank = commandFor_(start);
    const std::string mpirun = onPath("mpirun");
    if (mpirun.empty())
        throw std::runtime_error("mpirun is not on PATH (strategy.collective 'mpi' needs Open MPI's launcher: "
                                 "Debian's openmpi-bin)");
    std::vector<std::string> rankArgv = rank.argv;
    rankArgv.front() = rank.program;  // mpirun runs the program named first
    std::vector<std::string> argv = mpirunArgv(ranks_, rankArgv, ::geteuid() == 0);
    std::vector<std::string> env = rank.env;
    std::vector<char*> cargv, cenv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (std::string& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    int errors[2];
    if (::pipe2(errors, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t parent = ::getpid();
    // fork and exec rather than posix_spawn: mpirun must die with this launcher (PR_SET_PDEATHSIG,
    // kept across exec), and its ranks die with it. Only async-signal-safe calls in the child.
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        ::close(errors[0]);
        ::close(errors[1]);
        throw std::runtime_error(std::string("fork: ") + std::strerror(e));
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(127);
        ::dup2(errors[1], STDERR_FILENO);  // dup2 clears close-on-exec on the copy
        ::execve(mpirun.c_str(), cargv.data(), cenv.data());
        ::_exit(127);
    }
    ::close(errors[1]);
    if (reader_.joinable()) reader_.join();  // a restart: the last incarnation's mpirun has ended
    {
        std::lock_guard lock(mu_);
        rankFailures_.clear();
        seenPids_.clear();
    }
    reader_ = std::thread([this, fd = errors[0]] { readErrors(fd); });
    return pid;
}

void MpirunTaskHost::readErrors(int fd) {
    FILE* in = ::fdopen(fd, "r");
    if (!in) {
        ::close(fd);
        return;
    }
    char buf[4096];
    while (std::fgets(buf, sizeof buf, in)) {
        std::fputs(buf, stderr);
        std::string line(buf);
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
        if (!namesFailedRank(line)) continue;
        const size_t first = line.find_first_not_of(' ');
        std::lock_guard lock(mu_);
        if (first != std::string::npos && rankFailures_.size() < 8) rankFailures_.push_back(line.substr(first));
    }
    std::fclose(in);
}

std::string MpirunTaskHost::detail(pid_t) {
    std::lock_guard lock(mu_);
    std::string text;
    for (std::string l : rankFailures_) {
        // Open MPI 4.1 says "process rank 1 with PID 0" of a rank it lost: put in the pid seen here.
        constexpr std::string_view kRank = "process rank ", kPid0 = " with PID 0 ";
        const size_t at = l.find(kRank), pid0 = l.find(kPid0);
        if (at != std::string::npos && pid0 != std::string::npos) {
            const size_t rank = static_cast<size_t>(std::atoi(l.c_str() + at + kRank.size()));
            if (rank < seenPids_.size() && seenPids_[rank] > 0)
                l.replace(pid0, kPid0.size(), " with PID " + std::to_string(seenPids_[rank]) + " ");
        }
        text += (text.empty() ? "" : " / ") + l;
    }
    return text;
}

std::vector<pid_t> MpirunTaskHost::rankPids(pid_t mpirun) const {
    std::vector<pid_t> children;
    std::ifstream f("/proc/" + std::to_string(mpirun) + "/task/" + std::to_string(mpirun) + "/children");
    for (pid_t p; f >> p;) children.push_back(p);
    std::vector<pid_t> byRank(static_cast<size_t>(ranks_), -1);
    for (pid_t p : children) {
        const int r = mpiRankOf(p);
        if (r >= 0 && r < ranks_) byRank[static_cast<size_t>(r)] = p;
    }
    return byRank;
}

profiler::ProcessIdentity MpirunTaskHost::identity(pid_t pid) {
    // The chief's run is rank 0's: wait (briefly) for mpirun to start it.
    pid_t chief = -1;
    for (int i = 0; i < 200 && chief <= 0; ++i) {
        chief = rankPids(pid).at(0);
        if (chief <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    profiler::ProcessIdentity id = profiler::ProcessIdentity::current();
    id.pid = chief > 0 ? chief : pid;
    id.proc_start = profiler::ProcessIdentity::startTimeOf(id.pid);
    return id;
}

void MpirunTaskHost::signal(pid_t pid, int sig) { ::kill(pid, sig == SIGINT ? SIGUSR2 : sig); }

bool MpirunTaskHost::stopped(pid_t pid) {
    const std::vector<pid_t> ranks = rankPids(pid);
    {
        std::lock_guard lock(mu_);
        seenPids_.resize(ranks.size(), -1);
        for (size_t r = 0; r < ranks.size(); ++r)
            if (ranks[r] > 0) seenPids_[r] = ranks[r];
    }
    if (processStopped(pid)) return true;
    for (pid_t r : ranks)
        if (r > 0 && processStopped(r)) return true;
    return false;
}

std::optional<TaskExit> MpirunTaskHost::waitForExit(Clock::time_point deadline) { return waitForAnyChild(deadline); }

void MpirunTaskHost::reap(pid_t pid) { ::waitpid(pid, nullptr, 0); }

}  // namespace trainbench::app
