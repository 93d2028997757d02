#include "bench/onnximportbench.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/benchutil.h"
#include "bench/childprocess.h"
#include "engine/onnx/onnximport.h"

namespace trainbench::bench {

// Named: in a unity build this file shares a translation unit with other benches' helpers.
namespace onnximport {
namespace {

// One import's figures, either side.
struct Import {
    bool ok = false;
    std::string error;
    double seconds = 0;
    double peakExtra = 0;  // bytes: VmHWM after the call - VmRSS before it
    double keptExtra = 0;  // bytes: VmRSS after it, with the model still held - VmRSS before
    int64_t initializers = 0;
    int64_t weightBytes = 0;  // trainbench: the graph's initializer values, 4 bytes each
};

std::string cpuModel() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

std::string loadAverage() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    f >> a >> b >> c;
    return a + " " + b + " " + c;
}

// A field of /proc/self/status in bytes (the kernel gives kB); -1 when missing.
double statusBytes(const char* key) {
    std::ifstream f("/proc/self/status");
    const std::string prefix = std::string(key) + ":";
    for (std::string line; std::getline(f, line);)
        if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size())) * 1024.0;
    return -1;
}

// Sets the high-water mark to the current resident set ("5": Linux 4.0 on).
bool resetPeak() {
    std::ofstream f("/proc/self/clear_refs");
    f << "5";
    f.flush();
    return static_cast<bool>(f);
}

// Runs in the forked child: one readOnnx, its figures as JSON on `fd`.
[[noreturn]] void importInChild(const std::string& path, int fd) {
    nlohmann::json out;
    try {
        if (!resetPeak()) throw std::runtime_error("cannot write /proc/self/clear_refs");
        const double before = statusBytes("VmRSS");
        const auto t0 = Clock::now();
        const engine::graph::Graph g = engine::onnx::readOnnx(path);
        const double seconds = secondsSince(t0);
        out["seconds"] = seconds;
        out["peak_extra_bytes"] = statusBytes("VmHWM") - before;
        out["kept_extra_bytes"] = statusBytes("VmRSS") - before;
        int64_t values = 0;
        for (const auto& [name, init] : g.initializers) values += static_cast<int64_t>(init.values.size());
        out["initializers"] = g.initializers.size();
        out["weight_bytes"] = values * 4;
    } catch (const std::exception& e) {
        out["error"] = e.what();
    }
    const std::string text = out.dump();
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
    ::_exit(0);
}

Import fromJson(const std::string& text, const std::string& side) {
    Import r;
    try {
        const nlohmann::json j = nlohmann::json::parse(text);
        if (j.contains("error")) {
            r.error = j["error"].get<std::string>();
            return r;
        }
        r.seconds = j.at("seconds").get<double>();
        r.peakExtra = j.at("peak_extra_bytes").get<double>();
        r.keptExtra = j.at("kept_extra_bytes").get<double>();
        r.initializers = j.at("initializers").get<int64_t>();
        r.weightBytes = j.value("weight_bytes", int64_t{0});
        r.ok = true;
    } catch (const std::exception& e) {
        r.error = side + ": unreadable result '" + text + "': " + e.what();
    }
    return r;
}

Import ours(const std::string& path) {
    int fds[2];
    if (::pipe(fds) != 0) return {false, std::string("pipe: ") + std::strerror(errno)};
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) return {false, std::string("fork: ") + std::strerror(errno)};
    if (pid == 0) {
        ::close(fds[0]);
        importInChild(path, fds[1]);
    }
    ::close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) return {false, "the import's child process died (signal " + std::to_string(WTERMSIG(status)) + ")"};
    return fromJson(text, "trainbench");
}

Import peer(const OnnxImportBenchOptions& o) {
    const ChildRun run = runChild({o.python, o.peer, o.model});
    if (run.exitCode != 0) return {false, "onnx.load: exit " + std::to_string(run.exitCode) + ": " + run.err};
    std::string last;  // the peer prints one JSON line, last
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) last = line;
    return fromJson(last, "onnx.load");
}

double mb(double bytes) { return bytes / 1e6; }

struct Summary {
    double medianS = 0, minS = 0, maxS = 0, medianPeak = 0, minPeak = 0, maxPeak = 0, medianKept = 0;
};

Summary summarize(const std::vector<Import>& runs) {
    std::vector<double> s, p, k;
    for (const Import& r : runs) {
        s.push_back(r.seconds);
        p.push_back(r.peakExtra);
        k.push_back(r.keptExtra);
    }
    Summary m;
    m.medianS = median(s);
    m.minS = *std::min_element(s.begin(), s.end());
    m.maxS = *std::max_element(s.begin(), s.end());
    m.medianPeak = median(p);
    m.minPeak = *std::min_element(p.begin(), p.end());
    m.maxPeak = *std::max_element(p.begin(), p.end());
    m.medianKept = median(k);
    return m;
}

void printRow(const char* side, const Summary& m, double fileBytes) {
    std::printf("%-26s %7.3f s [%.3f-%.3f]   %8.1f MB [%.1f-%.1f]  %5.2fx   %8.1f MB  %5.2fx\n", side, m.medianS, m.minS,
                m.maxS, mb(m.medianPeak), mb(m.minPeak), mb(m.maxPeak), m.medianPeak / fileBytes, mb(m.medianKept),
                m.medianKept / fileBytes);
}

nlohmann::json toJson(const Summary& m, double fileBytes) {
    return {{"seconds_median", m.medianS},          {"seconds_min", m.minS},
            {"seconds_max", m.maxS},                {"peak_extra_bytes_median", m.medianPeak},
            {"peak_extra_bytes_max", m.maxPeak},    {"peak_over_file", m.medianPeak / fileBytes},
            {"kept_extra_bytes_median", m.medianKept}};
}

int run(const OnnxImportBenchOptions& o) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto size = fs::file_size(o.model, ec);
    if (ec) {
        std::fprintf(stderr, "onnx-import: %s: %s\n", o.model.c_str(), ec.message().c_str());
        return 2;
    }
    const double fileBytes = static_cast<double>(size);
    const bool withPeer = !o.peer.empty();
    if (withPeer && !fs::exists(o.peer)) {
        std::fprintf(stderr, "onnx-import: the peer script %s is missing\n", o.peer.c_str());
        return 2;
    }
    {  // Both sides read the file from the page cache: read it once, untimed.
        std::ifstream in(o.model, std::ios::binary);
        std::vector<char> buf(1 << 20);
        while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {}
    }
    std::printf("onnx-import: %s, %.1f MB (%lld bytes); %s; load average %s\n", o.model.c_str(), mb(fileBytes),
                static_cast<long long>(size), cpuModel().c_str(), loadAverage().c_str());
    std::printf("memory: peak = VmHWM after the call - VmRSS just before it (VmHWM reset by /proc/self/clear_refs), in the\n"
                "  importing process (trainbench: a fork of this one per round; onnx.load: its own python3); kept = VmRSS\n"
                "  after the call with the model still held - VmRSS before. Times and memory include reading the file\n"
                "  from the page cache. MB = 10^6 bytes.\n");
    std::vector<Import> tb, py;
    for (int r = 0; r < o.repeats; ++r) {
        const Import a = ours(o.model);
        if (!a.ok) {
            std::fprintf(stderr, "onnx-import: trainbench: %s\n", a.error.c_str());
            return 1;
        }
        tb.push_back(a);
        std::printf("round %d: readOnnx %.3f s, peak +%.1f MB, kept +%.1f MB (%lld initializers, %.1f MB of weights)", r + 1,
                    a.seconds, mb(a.peakExtra), mb(a.keptExtra), static_cast<long long>(a.initializers),
                    mb(static_cast<double>(a.weightBytes)));
        if (withPeer) {
            const Import b = peer(o);
            if (!b.ok) {
                std::printf("\n");
                std::fprintf(stderr, "onnx-import: %s\n", b.error.c_str());
                return 1;
            }
            py.push_back(b);
            std::printf("; onnx.load %.3f s, peak +%.1f MB, kept +%.1f MB", b.seconds, mb(b.peakExtra), mb(b.keptExtra));
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    std::printf("\n%-26s %-26s %-29s %-7s %-11s %s\n", "", "time median [min-max]", "peak extra median [min-max]", "/file",
                "kept extra", "/file");
    const Summary ourSummary = summarize(tb);
    printRow("trainbench readOnnx", ourSummary, fileBytes);
    nlohmann::json j = {{"bench", "onnx-import"},
                        {"model", o.model},
                        {"file_bytes", size},
                        {"repeats", o.repeats},
                        {"cpu", cpuModel()},
                        {"trainbench", toJson(ourSummary, fileBytes)}};
    if (withPeer) {
        const Summary peerSummary = summarize(py);
        printRow("python3-onnx onnx.load", peerSummary, fileBytes);
        std::vector<double> ratios;
        for (size_t i = 0; i < tb.size(); ++i) ratios.push_back(tb[i].seconds / py[i].seconds);
        std::printf("time trainbench / onnx.load: %.2f (median of the rounds' ratios) [%.2f-%.2f]\n", median(ratios),
                    *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()));
        j["onnx_load"] = toJson(peerSummary, fileBytes);
        j["time_ratio_median"] = median(ratios);
    }
    const bool timeMet = ourSummary.medianS <= 1.0;
    const bool memoryMet = ourSummary.medianPeak <= 1.5 * fileBytes;
    std::printf("goal: import <= 1 s: %s (%.3f s); peak memory <= 1.5x the file: %s (%.2fx)\n", timeMet ? "met" : "NOT met",
                ourSummary.medianS, memoryMet ? "met" : "NOT met", ourSummary.medianPeak / fileBytes);
    j["time_goal_met"] = timeMet;
    j["memory_goal_met"] = memoryMet;
    std::printf("%s\n", j.dump().c_str());
    return 0;
}

}  // namespace
}  // namespace onnximport

int onnxImportBench(const OnnxImportBenchOptions& options) { return onnximport::run(options); }

}  // namespace trainbench::bench
