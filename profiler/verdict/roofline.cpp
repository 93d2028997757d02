// The roofline rule (rule 4 in rules.h): op time left and right of the ridge, achieved rates.
#include "profiler/verdict/roofline.h"

#include <algorithm>

#include "profiler/verdict/evidencetext.h"
#include "profiler/verdict/experimentkeys.h"
#include "profiler/verdict/rules.h"

namespace trainbench::profiler {

OpMix opMix(const ProfileInput& input) {
    OpMix m;
    const double ridge = input.roofs ? input.roofs->ridge() : 0.0;
    for (const engine::prof::OpRow& row : input.ops) {
        if (row.seconds <= 0) continue;
        const double calls = static_cast<double>(row.calls);
        m.op_seconds += row.seconds;
        m.all_flops += row.flops * calls;
        // An op with no bytes (nothing to move) cannot be memory-bound: right of any ridge.
        const bool left = row.bytes > 0 && row.intensity() < ridge;
        if (left) {
            m.left_seconds += row.seconds;
            m.left_bytes += row.bytes * calls;
        } else {
            m.right_seconds += row.seconds;
            m.right_flops += row.flops * calls;
        }
        m.top.push_back({row.kind, row.shape, row.seconds, row.intensity(), left});
    }
    // A mirrored run's rows are summed over its replicas (mergeOpRows), a pipeline's over its stages
    // and a tensor-parallel run's over its devices; its phases are one replica's (one stage's, one
    // device's) training thread.
    const ExperimentView experiment(input.experiment);
    const int replicas = input.strategy == engine::StrategyKind::Mirrored   ? std::max(1, input.replicas)
                         : input.strategy == engine::StrategyKind::Pipeline ? static_cast<int>(experiment.integer("strategy.stages"))
                         : input.strategy == engine::StrategyKind::Tensor   ? static_cast<int>(experiment.integer("strategy.tensor"))
                                                                            : 1;
    m.op_seconds_per_replica = m.op_seconds / replicas;
    const size_t keep = std::min<size_t>(3, m.top.size());
    std::partial_sort(m.top.begin(), m.top.begin() + static_cast<std::ptrdiff_t>(keep), m.top.end(),
                      [](const TopOp& a, const TopOp& b) { return a.seconds > b.seconds; });
    m.top.resize(keep);
    if (input.roofs && input.roofs->peak_gflops > 0 && input.roofs->bandwidth_gbs > 0 && m.op_seconds > 0) {
        m.roofline = true;
        m.ridge = ridge;
        m.peak_gflops = input.roofs->peak_gflops;
        m.bandwidth_gbs = input.roofs->bandwidth_gbs;
    }
    return m;
}

namespace {

std::vector<Evidence> rooflineEvidence(const OpMix& m) {
    std::vector<Evidence> e;
    e.push_back(text::percentEvidence("ops_left_of_ridge", m.leftShare(),
                                      text::percent(m.leftShare()) + " % of op time in ops left of the ridge (intensity < " +
                                          text::fixed(m.ridge, 2) + " FLOP/B)"));
    e.push_back({"ridge", m.ridge, "FLOP/B",
                 "ridge point " + text::fixed(m.ridge, 2) + " FLOP/B = peak " + text::fixed(m.peak_gflops) +
                     " GFLOP/s / bandwidth " + text::fixed(m.bandwidth_gbs) + " GB/s"});
    if (m.left_seconds > 0)
        e.push_back({"achieved_bandwidth", m.leftGBs(), "GB/s",
                     "ops left of the ridge move at least " + text::fixed(m.leftGBs()) + " GB/s, " +
                         text::percent(m.leftGBs() / m.bandwidth_gbs) + " % of the " + text::fixed(m.bandwidth_gbs) +
                         " GB/s bandwidth roof (bytes are compulsory traffic from shapes, so the real traffic is "
                         "at least this)"});
    if (m.right_seconds > 0)
        e.push_back({"achieved_compute_right", m.rightGFlops(), "GFLOP/s",
                     "ops right of the ridge reach " + text::fixed(m.rightGFlops()) + " GFLOP/s, " +
                         text::percent(m.rightGFlops() / m.peak_gflops) + " % of the " + text::fixed(m.peak_gflops) +
                         " GFLOP/s peak"});
    e.push_back({"achieved_compute", m.allGFlops(), "GFLOP/s",
                 "all ops together " + text::fixed(m.allGFlops()) + " GFLOP/s, " +
                     text::percent(m.allGFlops() / m.peak_gflops) + " % of peak"});
    for (size_t i = 0; i < m.top.size(); ++i) {
        const TopOp& op = m.top[i];
        e.push_back(text::percentEvidence("top_op_" + std::to_string(i + 1), op.seconds / m.op_seconds,
                                          op.kind + " [" + op.shape + "]: " + text::percent(op.seconds / m.op_seconds) +
                                              " % of op time, intensity " + text::fixed(op.intensity, 2) + " FLOP/B (" +
                                              (op.left ? "left" : "right") + " of the ridge)"));
    }
    return e;
}

}  // namespace

std::optional<Finding> rooflineFinding(const OpMix& m) {
    if (!m.roofline) return std::nullopt;
    Finding f;
    f.evidence = rooflineEvidence(m);
    const double left = m.leftShare();
    const double nearRoof = m.leftGBs() / m.bandwidth_gbs;
    if (rules::reaches(left, rules::kRooflineMajority) && rules::reaches(nearRoof, rules::kNearBandwidthRoof)) {
        f.kind = BoundKind::MemoryBandwidth;
        f.severity = rules::reaches(left, rules::kBandwidthHigh) ? Severity::High : Severity::Moderate;
        f.summary = "Memory-bandwidth-bound: " + text::percent(left) + " % of op time in ops left of the ridge, at " +
                    text::percent(nearRoof) + " % of the bandwidth roof";
        return f;
    }
    f.kind = BoundKind::Compute;
    if (rules::reaches(left, rules::kRooflineMajority)) {
        // Left of the ridge but far below the bandwidth roof: the ops wait on latency and per-call
        // cost, which the processor pays; more bandwidth would not help them.
        f.severity = Severity::Moderate;
        f.summary = "Compute-bound (latency and overhead): " + text::percent(left) +
                    " % of op time in ops left of the ridge, but at only " + text::percent(nearRoof) +
                    " % of the bandwidth roof";
        return f;
    }
    const double atPeak = m.rightGFlops() / m.peak_gflops;
    f.severity = rules::reaches(atPeak, rules::kComputeAtRoof) ? Severity::High : Severity::Moderate;
    f.summary = "Compute-bound: " + text::percent(m.rightShare()) + " % of op time in ops right of the ridge, at " +
                text::percent(atPeak) + " % of peak GFLOP/s";
    return f;
}

}  // namespace trainbench::profiler
