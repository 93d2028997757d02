#pragma once
// Runs trainbench-cli as a child process for end-to-end tests: real process, real store file.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace trainbench::testing {

struct CliResult {
    int exitCode = -1;  // or 128 + signal
    std::string out, err;
    double cpuSeconds = 0.0;  // user + system time of the CLI and the children it waited for
};

inline std::string readAll(const std::filesystem::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// How to start the CLI besides its arguments: under a wrapper command found on PATH (e.g.
// {"ip", "netns", "exec", "ns"}) and with extra environment variables ("NAME=value").
struct Launch {
    std::vector<std::string> wrapper;
    std::vector<std::string> env;
};

class CliProcess {
public:
    explicit CliProcess(std::vector<std::string> args, const std::filesystem::path& dir, const Launch& launch = {})
        : dir_(dir) {
        outPath_ = dir / ("out-" + std::to_string(counter()++) + ".txt");
        errPath_ = outPath_;
        errPath_.replace_extension(".err");
        pid_ = fork();
        if (pid_ == 0) {
            int o = open(outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            int e = open(errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(o, 1);
            dup2(e, 2);
            int in = open("/dev/null", O_RDONLY);
            dup2(in, 0);
            for (const std::string& kv : launch.env) {
                const size_t eq = kv.find('=');
                setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
            }
            std::vector<std::string> all = launch.wrapper;
            all.push_back(TRAINBENCH_CLI_PATH);
            all.insert(all.end(), args.begin(), args.end());
            std::vector<char*> argv;
            for (auto& a : all) argv.push_back(a.data());
            argv.push_back(nullptr);
            execvp(argv[0], argv.data());
            _exit(127);
        }
    }
    // A process the test did not wait for (it failed an assertion first) is not left running.
    ~CliProcess() {
        if (pid_ > 0 && !waited_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    CliProcess(const CliProcess&) = delete;
    CliProcess& operator=(const CliProcess&) = delete;

    void signal(int sig) { kill(pid_, sig); }
    // Whether the process has ended, without waiting (it is reaped then: wait() returns its result).
    bool finished() {
        if (!waited_ && wait4(pid_, &status_, WNOHANG, &usage_) == pid_) waited_ = true;
        return waited_;
    }
    pid_t pid() const { return pid_; }
    CliResult wait() {
        if (!waited_) wait4(pid_, &status_, 0, &usage_);
        return ended();
    }
    // As wait(), but nothing if the process still runs after `limit` (it is left running).
    std::optional<CliResult> waitFor(std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (!finished()) {
            if (std::chrono::steady_clock::now() >= end) return std::nullopt;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return ended();
    }
    std::string currentErr() const { return readAll(errPath_); }

private:
    CliResult ended() {
        waited_ = true;
        const int status = status_;
        const rusage& usage = usage_;
        CliResult r;
        r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.cpuSeconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
        r.out = readAll(outPath_);
        r.err = readAll(errPath_);
        return r;
    }
    static int& counter() { static int c = 0; return c; }
    std::filesystem::path dir_, outPath_, errPath_;
    pid_t pid_ = -1;
    bool waited_ = false;
    int status_ = 0;
    rusage usage_{};
};

// A fixture's float32 little-endian values (what the tests/fixtures make.py scripts write with numpy).
inline std::vector<float> readFloats(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    std::vector<float> v(in ? static_cast<size_t>(in.tellg()) / sizeof(float) : 0);
    in.seekg(0);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    return v;
}

inline CliResult runCli(std::vector<std::string> args, const std::filesystem::path& dir) {
    return CliProcess(std::move(args), dir).wait();
}

// Writes text to path and returns the path, for experiment files written by a test.
inline std::string writeFile(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
    return path.string();
}

#ifdef TRAINBENCH_SOURCE_DIR
// The shipped W1 experiment (an MLP on Fashion-MNIST).
inline const std::string kMlp = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/fmnist-mlp.json";
#endif

// A fresh temporary folder per test, removed afterwards.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        path = std::filesystem::temp_directory_path() /
               ("trainbench-it-" + std::to_string(getpid()) + "-" + std::to_string(std::rand()));
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace trainbench::testing
