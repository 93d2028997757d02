#include "bench/encoderbench.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "bench/benchutil.h"
#include "bench/childprocess.h"
#include "engine/device/cpudevice.h"
#include "engine/graph/graphpasses.h"
#include "engine/inference/compiledgraph.h"
#include "engine/onnx/onnximport.h"

namespace trainbench::bench {

namespace {

constexpr int64_t kSequence = 128;

std::vector<float> readIds(const std::filesystem::path& file, int64_t n) {
    std::ifstream in(file, std::ios::binary);
    std::vector<int32_t> ids(static_cast<size_t>(n * kSequence));
    if (!in.read(reinterpret_cast<char*>(ids.data()), static_cast<std::streamsize>(ids.size() * sizeof(int32_t))))
        throw std::runtime_error(file.string() + ": fewer than " + std::to_string(n) + " sequences");
    return {ids.begin(), ids.end()};
}

nlohmann::json runPeer(const EncoderBenchOptions& o, const std::filesystem::path& dir, bool exportOnly) {
    std::vector<std::string> argv{"/usr/bin/env", "OMP_NUM_THREADS=" + std::to_string(o.threads), o.python,
                                  std::string(TRAINBENCH_SOURCE_DIR) + "/bench/pytorch_encoder.py", dir.string()};
    if (exportOnly) argv.push_back("--export");
    for (const std::string& a : {std::string("--batch"), std::to_string(o.batch), std::string("--threads"),
                                 std::to_string(o.threads), std::string("--calls"), std::to_string(o.calls)})
        argv.push_back(a);
    const ChildRun run = runChild(argv);
    if (run.exitCode != 0) throw std::runtime_error("bench/pytorch_encoder.py failed (needs " + o.python + " with torch): " + run.err);
    if (exportOnly) return {};
    const size_t line = run.out.rfind('{');
    if (line == std::string::npos) throw std::runtime_error("bench/pytorch_encoder.py printed no JSON: " + run.out);
    return nlohmann::json::parse(run.out.substr(line));
}

}  // namespace

int encoderBench(const EncoderBenchOptions& o) {
    const std::filesystem::path dir =
        o.dir.empty() ? std::filesystem::temp_directory_path() / "trainbench-bench-encoder" : std::filesystem::path(o.dir);
    if (!std::filesystem::exists(dir / "encoder.onnx") || !std::filesystem::exists(dir / "ids.bin")) runPeer(o, dir, true);
    const engine::graph::Graph graph = engine::onnx::readOnnx((dir / "encoder.onnx").string());
    const std::vector<float> ids = readIds(dir / "ids.bin", o.batch);
    engine::CpuDevice device(o.threads);
    engine::inference::CompiledGraph compiled(engine::graph::optimizeForInference(graph), device);
    std::vector<float> logits(static_cast<size_t>(o.batch * graph.classes));
    compiled.run(ids.data(), o.batch, logits.data());

    std::printf("encoder: BERT-style, 4 layers x 4 heads, hidden 256, 128 tokens, %lld parameters; batch %d, %d threads\n",
                static_cast<long long>(graph.parameterCount()), o.batch, o.threads);
    std::printf("%5s %16s %16s %7s\n", "round", "trainbench ex/s", "PyTorch ex/s", "ratio");
    std::vector<double> ours, theirs;
    bool agreed = true;
    for (int r = 0; r < o.rounds; ++r) {
        const nlohmann::json peer = runPeer(o, dir, false);
        if (r == 0) {
            const std::vector<double> want = peer["logits"].get<std::vector<double>>();
            double scale = 0, worst = 0;
            for (double v : want) scale = std::max(scale, std::fabs(v));
            for (size_t i = 0; i < want.size() && i < logits.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - want[i]));
            agreed = worst <= 1e-4 * scale;
            std::printf("logits of the first 4 sequences: largest difference %.2e (%.2e of the largest)%s\n", worst,
                        worst / scale, agreed ? "" : "  DISAGREE");
        }
        theirs.push_back(peer["examples_per_second"].get<double>());
        double best = 0;
        for (int pass = 0; pass < 3; ++pass) {
            const auto t0 = Clock::now();
            for (int c = 0; c < o.calls; ++c) compiled.run(ids.data(), o.batch, logits.data());
            best = std::max(best, static_cast<double>(o.calls) * o.batch / secondsSince(t0));
        }
        ours.push_back(best);
        std::printf("%5d %16.1f %16.1f %6.2fx\n", r + 1, ours.back(), theirs.back(), ours.back() / theirs.back());
    }
    std::printf("%5s %16.1f %16.1f %6.2fx  (medians)\n", "", median(ours), median(theirs), median(ours) / median(theirs));
    return agreed ? 0 : 1;
}

}  // namespace trainbench::bench
