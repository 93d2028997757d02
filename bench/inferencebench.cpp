#include "bench/inferencebench.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "bench/benchutil.h"
#include "bench/childprocess.h"
#include "engine/data/idxreader.h"
#include "engine/graph/graphfrommodel.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/calibration.h"
#include "engine/inference/compiledgraph.h"
#include "engine/inference/int8compiledgraph.h"
#include "engine/model/model.h"

namespace trainbench::bench {

namespace {

namespace fs = std::filesystem;
using engine::inference::CompiledGraph;
using engine::inference::Int8CompiledGraph;

constexpr int64_t kPixels = 28 * 28;

// One side's figures of one round.
struct Figures {
    double p50ms = 0, p99ms = 0, batch1PerS = 0, batch256PerS = 0;
    std::vector<float> logits8;
    std::string peerSetups;  // which PyTorch setup gave the batch-1 and the batch-256 figures
    // The peer's own int8 model (pytorch_infer.py --int8), when it ran one.
    double int8P50ms = 0, int8P99ms = 0, int8Batch1PerS = 0, int8Batch256PerS = 0;
    std::string int8Setup;
};

std::string cpuModel() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

// The test images as pytorch_peer.py holds them: pixels / 255, fp32, [n, 1, 28, 28].
std::vector<float> testImages(const std::string& dir) {
    const engine::IdxArray idx = engine::readIdx(dir + "/t10k-images-idx3-ubyte.gz");
    std::vector<float> x(idx.data.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(idx.data[i]) / 255.0f;
    return x;
}

size_t argmax(const float* v, int64_t n) { return static_cast<size_t>(std::max_element(v, v + n) - v); }

template <typename Executor>
Figures measureOurs(Executor& c, const std::vector<float>& x, const InferenceBenchOptions& o) {
    const int64_t n = static_cast<int64_t>(x.size()) / kPixels;
    std::vector<float> logits(256 * 10);
    volatile size_t sink = 0;  // the argmax a caller would take, kept
    for (int64_t i = 0; i < 50; ++i) c.run(x.data() + i * kPixels, 1, logits.data());
    std::vector<double> lat;
    for (int q = 0; q < o.queries; ++q) {
        const auto t0 = Clock::now();
        c.run(x.data() + (q % n) * kPixels, 1, logits.data());
        sink = sink + argmax(logits.data(), 10);
        lat.push_back(secondsSince(t0));
    }
    Figures f;
    double total = 0;
    for (double s : lat) total += s;
    f.batch1PerS = static_cast<double>(lat.size()) / total;
    std::sort(lat.begin(), lat.end());
    f.p50ms = lat[lat.size() / 2] * 1e3;
    f.p99ms = lat[std::min(lat.size() - 1, static_cast<size_t>(std::lround(0.99 * static_cast<double>(lat.size()))) - 1)] * 1e3;
    auto pass = [&] {
        for (int64_t i = 0; i < n; i += 256) c.run(x.data() + i * kPixels, std::min<int64_t>(256, n - i), logits.data());
    };
    pass();  // warm-up: builds the plans for 256 and the tail
    for (int p = 0; p < o.passes; ++p) {
        const auto t0 = Clock::now();
        pass();
        f.batch256PerS = std::max(f.batch256PerS, static_cast<double>(n) / secondsSince(t0));
    }
    c.run(x.data(), 8, logits.data());
    f.logits8.assign(logits.begin(), logits.begin() + 80);
    return f;
}

bool measurePeer(const std::string& workload, const std::string& weights, const InferenceBenchOptions& o, Figures& f,
                 double& othersCpus) {
    std::vector<std::string> argv{"/usr/bin/env",
                                  "OMP_NUM_THREADS=" + std::to_string(o.threads),
                                  "MALLOC_MMAP_THRESHOLD_=1073741824",
                                  "MALLOC_TRIM_THRESHOLD_=1073741824",
                                  o.python, o.peer, "--workload", workload, "--weights", weights,
                                  "--threads", std::to_string(o.threads), "--queries", std::to_string(o.queries),
                                  "--passes", std::to_string(o.passes), "--int8"};
    argv.insert(argv.end(), o.peerArgs.begin(), o.peerArgs.end());
    const ChildRun run = runChild(argv);
    othersCpus = run.othersCpus;
    const size_t lastLine = run.out.find_last_of('\n', run.out.size() >= 2 ? run.out.size() - 2 : 0);
    try {
        if (run.exitCode != 0) throw std::runtime_error("exit status " + std::to_string(run.exitCode));
        const nlohmann::json j = nlohmann::json::parse(run.out.substr(lastLine == std::string::npos ? 0 : lastLine + 1));
        f.p50ms = j.at("latency_ms_p50");
        f.p99ms = j.at("latency_ms_p99");
        f.batch256PerS = j.at("batch256_samples_per_s");
        f.logits8 = j.at("logits8").get<std::vector<float>>();
        f.peerSetups = "batch 1: " + j.value("latency_ms_p50_setup", std::string("?")) +
                       "; batch 256: " + j.value("batch256_samples_setup", std::string("?"));
        f.batch1PerS = j.at("batch1_samples_per_s");
        if (j.contains("int8")) {
            const nlohmann::json& q = j.at("int8");
            f.int8P50ms = q.at("latency_ms_p50");
            f.int8P99ms = q.at("latency_ms_p99");
            f.int8Batch1PerS = q.at("batch1_samples_per_s");
            f.int8Batch256PerS = q.at("batch256_samples_per_s");
            f.int8Setup = q.value("setup", std::string("?"));
        }
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "PyTorch peer failed (%s): %s\n%s\n", e.what(), run.out.c_str(), run.err.c_str());
        return false;
    }
}

struct Series {
    std::vector<double> ours, peer;
};

void printRow(const char* label, const Series& s, bool lowerIsBetter) {
    auto stat = [](const std::vector<double>& v) {
        char b[64];
        std::snprintf(b, sizeof b, "%9.4g [%.4g-%.4g]", median(v), *std::min_element(v.begin(), v.end()),
                      *std::max_element(v.begin(), v.end()));
        return std::string(b);
    };
    const double ratio = median(s.ours) / median(s.peer);
    std::printf("  %-26s %-28s %-28s %6.2fx%s\n", label, stat(s.ours).c_str(), stat(s.peer).c_str(), ratio,
                lowerIsBetter ? " (lower is better)" : "");
}

}  // namespace

int inferenceBench(const InferenceBenchOptions& o) {
    engine::bindComputeThreads(o.threads);
    engine::CpuDevice dev(o.threads);
    const std::vector<float> x = testImages(o.data);
    const fs::path dir = fs::temp_directory_path() / ("tb-infer-bench-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::printf("fp32 inference, %d thread(s), %s; Fashion-MNIST test set (%zu images), weights: seeded init\n",
                o.threads, cpuModel().c_str(), x.size() / kPixels);
    std::printf("trainbench: CompiledGraph (oneDNN fp32, %s); PyTorch: %s (jit trace + freeze, with and without "
                "optimize_for_inference, the better per figure; channels_last for W2)%s\n",
                o.unfolded ? "graph as built" : "BN folded, ReLU fused", o.peer.c_str(),
                o.peerArgs.empty() ? "" : ", peer arguments given");
    int failures = 0;
    for (const std::string& w : o.workloads) {
        const engine::ModelSpec spec{w == "w1" ? "mlp" : "cnn", engine::presetLayers(w == "w1" ? "mlp" : "cnn"), {}, {}, {}};
        engine::Model m(spec, {1, 28, 28}, 10, dev, 42);
        const std::string weights = (dir / (w + ".f32")).string();
        std::ofstream(weights, std::ios::binary)
            .write(reinterpret_cast<const char*>(m.params()), static_cast<std::streamsize>(m.paramCount() * sizeof(float)));
        engine::graph::Graph g = engine::graph::graphFromModel(spec, {1, 28, 28}, 10,
                                                               {m.params(), static_cast<size_t>(m.paramCount())}, m.state());
        if (!o.unfolded) g = engine::graph::optimizeForInference(std::move(g));
        CompiledGraph c(g, dev);
        // int8: calibrated on the first 4 x 64 test images (a speed figure; the accuracy bar is
        // tests/app/quantizeaccuracy_test.cpp, calibrated on training images).
        engine::inference::CalibrationOptions calibration;
        const engine::inference::QuantizedGraph q =
            engine::inference::quantizeGraph(g, x.data(), static_cast<int64_t>(x.size()) / kPixels, calibration);
        Int8CompiledGraph c8(q, dev);
        std::map<std::string, Series> s, s8, q8;
        std::string peerInt8;
        double worstOthers = 0, logitDiff = 0;
        std::string peerSetups;
        for (int r = 0; r < o.rounds; ++r) {
            const Figures a = measureOurs(c, x, o);
            const Figures a8 = measureOurs(c8, x, o);
            s8["p50"].ours.push_back(a8.p50ms), s8["p50"].peer.push_back(a.p50ms);
            s8["p99"].ours.push_back(a8.p99ms), s8["p99"].peer.push_back(a.p99ms);
            s8["b1"].ours.push_back(a8.batch1PerS), s8["b1"].peer.push_back(a.batch1PerS);
            s8["b256"].ours.push_back(a8.batch256PerS), s8["b256"].peer.push_back(a.batch256PerS);
            Figures b;
            double others = 0;
            if (!measurePeer(w, weights, o, b, others)) {
                ++failures;
                continue;
            }
            worstOthers = std::max(worstOthers, others);
            peerSetups = b.peerSetups;
            for (size_t i = 0; i < a.logits8.size() && i < b.logits8.size(); ++i)
                logitDiff = std::max(logitDiff, static_cast<double>(std::abs(a.logits8[i] - b.logits8[i])));
            s["p50"].ours.push_back(a.p50ms), s["p50"].peer.push_back(b.p50ms);
            s["p99"].ours.push_back(a.p99ms), s["p99"].peer.push_back(b.p99ms);
            s["b1"].ours.push_back(a.batch1PerS), s["b1"].peer.push_back(b.batch1PerS);
            s["b256"].ours.push_back(a.batch256PerS), s["b256"].peer.push_back(b.batch256PerS);
            if (b.int8Batch256PerS > 0) {
                peerInt8 = b.int8Setup;
                q8["p50"].ours.push_back(a8.p50ms), q8["p50"].peer.push_back(b.int8P50ms);
                q8["p99"].ours.push_back(a8.p99ms), q8["p99"].peer.push_back(b.int8P99ms);
                q8["b1"].ours.push_back(a8.batch1PerS), q8["b1"].peer.push_back(b.int8Batch1PerS);
                q8["b256"].ours.push_back(a8.batch256PerS), q8["b256"].peer.push_back(b.int8Batch256PerS);
            }
        }
        if (s["p50"].ours.empty()) continue;
        std::printf("\n%s (%s), medians of %zu rounds [min-max]   trainbench                   PyTorch                      "
                    "ratio\n",
                    w == "w1" ? "W1" : "W2", spec.preset.c_str(), s["p50"].ours.size());
        printRow("batch-1 latency p50 ms", s["p50"], true);
        printRow("batch-1 latency p99 ms", s["p99"], true);
        printRow("batch-1 examples/s", s["b1"], false);
        printRow("batch-256 examples/s", s["b256"], false);
        std::printf("  same weights: logits of 8 images differ by at most %.2g; other processes kept %.2f CPUs busy "
                    "(worst peer run)\n",
                    logitDiff, worstOthers);
        std::printf("  PyTorch's best setup (last round): %s\n", peerSetups.c_str());
        std::printf("  %s int8 (Int8CompiledGraph, oneDNN ISA %s, u8 codes 0-%d) vs fp32, same rounds   int8      "
                    "                   fp32\n",
                    w == "w1" ? "W1" : "W2", engine::inference::effectiveIsa().c_str(),
                    q.calibration.u8_levels);
        printRow("int8 batch-1 latency p50 ms", s8["p50"], true);
        printRow("int8 batch-1 latency p99 ms", s8["p99"], true);
        printRow("int8 batch-1 examples/s", s8["b1"], false);
        printRow("int8 batch-256 examples/s", s8["b256"], false);
        if (!q8["b256"].ours.empty()) {
            std::printf("  %s int8: trainbench vs PyTorch's int8 (%s; goal: batch-256 >= 1.3x)   trainbench    PyTorch\n",
                        w == "w1" ? "W1" : "W2", peerInt8.c_str());
            printRow("int8 batch-1 latency p50 ms", q8["p50"], true);
            printRow("int8 batch-1 latency p99 ms", q8["p99"], true);
            printRow("int8 batch-1 examples/s", q8["b1"], false);
            printRow("int8 batch-256 examples/s", q8["b256"], false);
        }
        std::printf("  weights: fp32 %lld bytes, int8 %lld bytes\n",
                    static_cast<long long>(engine::inference::fp32WeightBytes(g)), static_cast<long long>(q.weightBytes()));
    }
    fs::remove_all(dir);
    return failures ? 1 : 0;
}

}  // namespace trainbench::bench
