#pragma once
// A replica of a prediction run as a process of its own (trainbench-cli predict --replicas N): the
// parent starts `trainbench-cli predict ... --replica I/N`, which predicts its shard of the input and
// writes one line per batch to its standard output (and its errors to the same pipe); the parent
// reads the lines of all replicas as they come, each wait with a deadline.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trainbench::app {

class ReplicaProcess {
public:
    // Starts `argv` (argv[0] is the program) with standard output and error on a pipe to this
    // process, in a process group of its own, with the default signal mask. std::runtime_error naming
    // the program when it cannot be started.
    explicit ReplicaProcess(const std::vector<std::string>& argv);
    ~ReplicaProcess();  // kills the process if it still runs, and reaps it
    ReplicaProcess(const ReplicaProcess&) = delete;
    ReplicaProcess& operator=(const ReplicaProcess&) = delete;

    pid_t pid() const { return pid_; }
    int fd() const { return fd_; }  // the pipe's read end, for poll()
    // Reads what is available (call when poll() says so); returns false at end of file.
    bool readAvailable();
    // The next complete line read so far, without its newline.
    std::optional<std::string> nextLine();
    // Waits for the process to end (after end of file) and says how it ended: "exit 0", "exit 1",
    // "killed by signal 9".
    std::string wait();
    void signal(int sig);

private:
    pid_t pid_ = -1;
    int fd_ = -1;
    std::string buffer_;
    bool reaped_ = false;
    int status_ = 0;
};

// Each of `replicas` lines as they come: fn(index, line); a replica's end of file calls
// fn(index, nullopt). Returns when every replica has reached end of file, or when fn returns false.
// std::runtime_error when none has written anything for `silence` (the message names the replicas
// still running). `onWake` runs at least once a second (a stop request is relayed there).
void readReplicaLines(std::vector<ReplicaProcess*>& replicas, std::chrono::seconds silence,
                      const std::function<bool(size_t, const std::optional<std::string>&)>& fn,
                      const std::function<void()>& onWake = {});

}  // namespace trainbench::app
