#include "engine/model/pipelineschedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trainbench::engine {

std::string_view pipelineScheduleName(PipelineSchedule s) { return s == PipelineSchedule::GPipe ? "gpipe" : "1f1b"; }

std::optional<PipelineSchedule> parsePipelineSchedule(std::string_view name) {
    if (name == "gpipe") return PipelineSchedule::GPipe;
    if (name == "1f1b") return PipelineSchedule::OneFOneB;
    return std::nullopt;
}

std::vector<std::vector<PipelineOp>> pipelineOps(PipelineSchedule schedule, int stages, int micro) {
    if (stages < 1 || micro < 1)
        throw std::invalid_argument("a pipeline needs at least one stage and one micro-batch, got " +
                                    std::to_string(stages) + " and " + std::to_string(micro));
    std::vector<std::vector<PipelineOp>> ops(static_cast<size_t>(stages));
    for (int k = 0; k < stages; ++k) {
        auto& o = ops[static_cast<size_t>(k)];
        if (schedule == PipelineSchedule::GPipe) {
            for (int m = 0; m < micro; ++m) o.push_back({true, m});
            for (int m = 0; m < micro; ++m) o.push_back({false, m});
            continue;
        }
        const int warmup = std::min(stages - k - 1, micro);
        int f = 0, b = 0;
        for (; f < warmup; ++f) o.push_back({true, f});
        while (f < micro) {  // steady state: one forward, one backward
            o.push_back({true, f++});
            o.push_back({false, b++});
        }
        while (b < micro) o.push_back({false, b++});  // drain
    }
    return ops;
}

int microBatchesInFlight(PipelineSchedule schedule, int stages, int micro, int stage) {
    if (schedule == PipelineSchedule::GPipe) return micro;
    return std::max(1, std::min(micro, stages - stage));
}

double idealBubbleFraction(int stages, int micro) {
    return static_cast<double>(stages - 1) / static_cast<double>(micro + stages - 1);
}

double PipelineTimeline::bubbleFraction() const {
    if (stepSeconds <= 0.0 || busySeconds.empty()) return 0.0;
    double busy = 0.0;
    for (double b : busySeconds) busy += b;
    return 1.0 - busy / (static_cast<double>(busySeconds.size()) * stepSeconds);
}

PipelineTimeline simulatePipeline(PipelineSchedule schedule, int stages, int micro, const std::vector<double>& forwardSeconds,
                                  const std::vector<double>& backwardSeconds, double handoffSeconds) {
    return simulatePipeline(schedule, stages, micro, forwardSeconds, backwardSeconds,
                            std::vector<double>(static_cast<size_t>(std::max(stages - 1, 0)), handoffSeconds));
}

PipelineTimeline simulatePipeline(PipelineSchedule schedule, int stages, int micro, const std::vector<double>& forwardSeconds,
                                  const std::vector<double>& backwardSeconds, const std::vector<double>& handoffSeconds) {
    if (static_cast<int>(forwardSeconds.size()) != stages || static_cast<int>(backwardSeconds.size()) != stages)
        throw std::invalid_argument("simulatePipeline: one forward and one backward time per stage");
    if (static_cast<int>(handoffSeconds.size()) != std::max(stages - 1, 0))
        throw std::invalid_argument("simulatePipeline: one hand-off time per boundary between stages");
    const auto ops = pipelineOps(schedule, stages, micro);
    const size_t K = static_cast<size_t>(stages), M = static_cast<size_t>(micro);
    constexpr double kNotYet = -1.0;
    std::vector<std::vector<double>> fwdEnd(K, std::vector<double>(M, kNotYet)), bwdEnd(K, std::vector<double>(M, kNotYet));
    std::vector<size_t> next(K, 0);
    std::vector<double> free(K, 0.0);
    PipelineTimeline t;
    t.busySeconds.assign(K, 0.0);
    // Place the op of some stage whose inputs are known; the schedule's order guarantees one exists
    // until all are placed (pipelineOps never deadlocks).
    for (size_t placed = 0, total = K * 2 * M; placed < total;) {
        bool progress = false;
        for (size_t k = 0; k < K; ++k) {
            if (next[k] == ops[k].size()) continue;
            const PipelineOp op = ops[k][next[k]];
            const size_t m = static_cast<size_t>(op.micro);
            double ready = free[k];
            if (op.forward) {
                if (k > 0) {
                    if (fwdEnd[k - 1][m] == kNotYet) continue;
                    ready = std::max(ready, fwdEnd[k - 1][m] + handoffSeconds[k - 1]);
                }
            } else {
                if (k + 1 < K) {
                    if (bwdEnd[k + 1][m] == kNotYet) continue;
                    ready = std::max(ready, bwdEnd[k + 1][m] + handoffSeconds[k]);
                }
                ready = std::max(ready, fwdEnd[k][m]);
            }
            const double d = op.forward ? forwardSeconds[k] : backwardSeconds[k];
            const double end = ready + d;
            (op.forward ? fwdEnd : bwdEnd)[k][m] = end;
            free[k] = end;
            t.busySeconds[k] += d;
            t.events.push_back({static_cast<int>(k), op, ready, end});
            t.stepSeconds = std::max(t.stepSeconds, end);
            ++next[k];
            ++placed;
            progress = true;
        }
        if (!progress) throw std::logic_error("simulatePipeline: the schedule deadlocks");
    }
    return t;
}

}  // namespace trainbench::engine
