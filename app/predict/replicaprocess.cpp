#include "app/predict/replicaprocess.h"

#include "app/job/spawnprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>

namespace trainbench::app {

ReplicaProcess::ReplicaProcess(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    try {
        pid_ = spawnInOwnGroup(argv.front(), argv, nullptr, &actions);
    } catch (const std::runtime_error& e) {
        posix_spawn_file_actions_destroy(&actions);
        ::close(fds[0]);
        ::close(fds[1]);
        throw std::runtime_error("cannot start " + argv.front() + ": " + e.what());
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    fd_ = fds[0];
}

ReplicaProcess::~ReplicaProcess() {
    if (fd_ >= 0) ::close(fd_);
    if (pid_ > 0 && !reaped_) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
}

bool ReplicaProcess::readAvailable() {
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(fd_, chunk, sizeof chunk);
        if (n > 0) {
            buffer_.append(chunk, static_cast<size_t>(n));
            return true;
        }
        if (n == 0) return false;
        if (errno != EINTR) return false;
    }
}

std::optional<std::string> ReplicaProcess::nextLine() {
    const size_t end = buffer_.find('\n');
    if (end == std::string::npos) return std::nullopt;
    std::string line = buffer_.substr(0, end);
    buffer_.erase(0, end + 1);
    return line;
}

std::string ReplicaProcess::wait() {
    if (!reaped_) {
        while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
        }
        reaped_ = true;
    }
    if (WIFEXITED(status_)) return "exit " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) return "killed by signal " + std::to_string(WTERMSIG(status_));
    return "ended (status " + std::to_string(status_) + ")";
}

void ReplicaProcess::signal(int sig) {
    if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
}

void readReplicaLines(std::vector<ReplicaProcess*>& replicas, std::chrono::seconds silence,
                      const std::function<bool(size_t, const std::optional<std::string>&)>& fn,
                      const std::function<void()>& onWake) {
    using Clock = std::chrono::steady_clock;
    std::vector<bool> open(replicas.size(), true);
    size_t running = replicas.size();
    Clock::time_point heard = Clock::now();
    while (running > 0) {
        if (onWake) onWake();
        std::vector<pollfd> fds;
        std::vector<size_t> which;
        for (size_t i = 0; i < replicas.size(); ++i)
            if (open[i]) {
                fds.push_back({replicas[i]->fd(), POLLIN, 0});
                which.push_back(i);
            }
        const int ready = ::poll(fds.data(), fds.size(), 1000);
        if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        if (ready <= 0) {
            if (Clock::now() - heard < silence) continue;
            std::string names;
            for (size_t i : which)
                names += (names.empty() ? "" : ", ") + std::to_string(i) + " (pid " + std::to_string(replicas[i]->pid()) + ")";
            throw std::runtime_error("no replica said anything for " + std::to_string(silence.count()) +
                                     " s; still running: replica " + names);
        }
        heard = Clock::now();
        for (size_t k = 0; k < fds.size(); ++k) {
            if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const size_t i = which[k];
            const bool more = replicas[i]->readAvailable();
            while (auto line = replicas[i]->nextLine())
                if (!fn(i, line)) return;
            if (!more) {
                open[i] = false;
                --running;
                if (!fn(i, std::nullopt)) return;
            }
        }
    }
}

}  // namespace trainbench::app
