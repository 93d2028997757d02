#pragma once
// Rule 4 of the classifier (rules.h): where the run's op time sits against the machine's roofline —
// left of the ridge (memory traffic could bound it) or right (compute could) — and how close the
// ops come to the roof they are under. Op stats are per run, so every window shares this.
#include <string>
#include <vector>

#include "profiler/verdict/profileinput.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::profiler {

struct TopOp {
    std::string kind;
    std::string shape;
    double seconds = 0.0;
    double intensity = 0.0;  // FLOP per byte
    bool left = false;       // left of the ridge
};

struct OpMix {
    double op_seconds = 0.0;              // all rows, as recorded
    double op_seconds_per_replica = 0.0;  // comparable with one training thread's phases
    bool roofline = false;                // roofs and timed ops: the rule can run
    double ridge = 0.0;
    double peak_gflops = 0.0;
    double bandwidth_gbs = 0.0;
    double left_seconds = 0.0, right_seconds = 0.0;
    double left_bytes = 0.0;    // bytes moved by ops left of the ridge (all calls)
    double right_flops = 0.0;   // FLOPs of ops right of the ridge (all calls)
    double all_flops = 0.0;
    std::vector<TopOp> top;     // up to three rows by time, longest first

    double leftShare() const { return op_seconds > 0 ? left_seconds / op_seconds : 0.0; }
    double rightShare() const { return op_seconds > 0 ? right_seconds / op_seconds : 0.0; }
    // Time-weighted achieved rates: sums over sums, so long ops weigh most.
    double leftGBs() const { return left_seconds > 0 ? left_bytes / left_seconds * 1e-9 : 0.0; }
    double rightGFlops() const { return right_seconds > 0 ? right_flops / right_seconds * 1e-9 : 0.0; }
    double allGFlops() const { return op_seconds > 0 ? all_flops / op_seconds * 1e-9 : 0.0; }
};

OpMix opMix(const ProfileInput& input);

// The roofline verdict (memory bandwidth or compute) with its evidence; nothing without roofs or ops.
std::optional<Finding> rooflineFinding(const OpMix& mix);

}  // namespace trainbench::profiler
