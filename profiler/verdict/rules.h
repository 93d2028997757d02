#pragma once
// The classifier's rules and thresholds in one place (internal to profiler/verdict), so that the
// code, the tests and docs/profiler.md say the same thing.
//
// WHICH STEPS
//   * Fractions are of training step time: the sum of step_seconds over the steps considered.
//   * The run's verdict skips warm-up, the first min(20, n / 10) steps (integer division; a run of
//     fewer than 10 steps keeps them all). The timeline's windows cover every step.
//   * A threshold is met when the fraction is >= the threshold minus 1e-9 (float sums of exactly
//     5 % must count as 5 %).
//
// THE VERDICT, in order of priority (the first rule that holds is the verdict; every other rule
// that holds becomes a further finding, most important first in the same order)
//   1. Memory capacity (its numbers are per run):
//        footprint = modelBytes() (parameters, gradients, optimizer state, activations by shapes),
//        or peak RSS if larger when the device is host RAM (for an emulated device the process's RSS
//        also holds the data set and the runtime, so only the model by shapes is compared);
//        capacity-bound if footprint >= 90 % of device_bytes, or the run was swapping: >= 100 major
//        page faults of the run process during training AND >= 10 per second of training
//        (step + evaluation + checkpoint seconds of all steps). Library and file page-ins are a few
//        dozen at start; at ~1 ms per fault from swap, 10/s is >= 1 % of the time and rising.
//        swapped_pages is system-wide (other processes on a shared VM swap too): evidence only.
//        Severity high if footprint >= 100 % or swapping, else moderate.
//   2. Input >= 20 % or communication >= 20 %: the larger of the two (input on a tie).
//        input fraction = sum(input_seconds) / sum(step_seconds) — TensorFlow Profiler's rule:
//        >= 20 % highly input-bound (severity high);
//        communication fraction = sum(exposed_comm_seconds) / sum(step_seconds); exposed_comm is the
//        training thread blocked on the exchange, moving data or waiting for peers. Severity high if
//        >= 40 %, else moderate. comm_seconds and wait_seconds are reported as evidence when nonzero.
//   3. Input >= 5 %: moderately input-bound (severity moderate).
//   4a. Overhead >= 50 % (see FURTHER FINDINGS): when half the step or more is outside the measured
//        ops, the roofline describes the lesser part of it, so the overhead comes first and the
//        roofline becomes a further finding. A window of the timeline takes the run's op seconds
//        per second of compute phases for its own (op stats are per run).
//   4. The roofline, when the machine's roofs and per-op statistics exist (op stats are per run, so
//      a window uses the run's op mix). Ridge = peak GFLOP/s / bandwidth GB/s. An op is left of the
//      ridge when its intensity (FLOPs / bytes per call) < ridge.
//        Memory-bandwidth-bound: >= 50 % of op time in ops left of the ridge AND their
//        time-weighted achieved bandwidth (sum of bytes / sum of seconds) >= 50 % of the bandwidth
//        roof. Severity high if >= 70 % of op time is left of the ridge, else moderate.
//        Compute-bound: otherwise, i.e. >= 50 % of op time right of the ridge, or ops left of the
//        ridge far from the bandwidth roof (< 50 %): those are latency- or overhead-bound (small
//        ops, per-call cost, thread hand-offs); the processor, not memory bandwidth, is what they
//        wait for, so the compute actions apply (more threads, bigger batches to amortise calls).
//        Severity high if the ops right of the ridge reach >= 50 % of peak GFLOP/s (at the roof:
//        only faster hardware or less work helps), moderate otherwise (and for the latency case).
//        Bytes are compulsory traffic from shapes (each tensor once), so achieved GB/s is a lower
//        bound on the real traffic; the evidence says so.
//   5. Balanced (severity low): none of the above, e.g. no roofs and nothing else stands out.
//
// FURTHER FINDINGS (whole run only)
//   * Overhead: step time outside the measured ops = (forward + backward + optimizer over all steps
//     - op seconds per replica, not below 0) + other_seconds, as a fraction of all steps' time.
//     >= 30 % is a finding of kind compute (the processor runs the framework, not the ops), severity
//     high at >= 50 % (then the verdict, rule 4a), else moderate. On an emulated device the time
//     outside the ops is the device's per-step overhead from the catalog, and the evidence says so.
//     Op seconds of a mirrored run are summed over its replicas (mergeOpRows), so they are divided
//     by the replicas; evaluation ops may be counted too, which can only make the overhead look
//     smaller.
//   * Evaluation and checkpoints: when sum(eval) + sum(checkpoint) >= 20 % of sum(step) + sum(eval)
//     + sum(checkpoint) over the steps considered, that share is evidence on the verdict, and the
//     actions "evaluate less often" / "checkpoint less often" are added. They address kind
//     "balanced", which for an action means "not a bound of the training step": the time is spent
//     between steps, so no bound kind fits, and labelling them with the verdict's kind would file
//     them under a bound they do not touch.
//   * Swapped pages without the run's own major faults: evidence on the verdict (other processes).
//
// THE TIMELINE
//   * About 20 windows of at least 10 steps (fewer, longer windows for shorter runs; one window
//     under 20 steps), sizes as equal as possible. Each window is classified by rules 1-5 on its own
//     steps (no warm-up skipped): a window's verdict is what the run's would be if the run were those
//     steps alone. Adjacent windows with the same kind and severity are merged.
#include <cstdint>

namespace trainbench::profiler::rules {

inline constexpr double kTolerance = 1e-9;       // float sums at a threshold count as reaching it
inline constexpr int64_t kWarmupMaxSteps = 20;   // skip min(20, n / 10) steps
inline constexpr int64_t kWarmupDivisor = 10;

inline constexpr double kCommHigh = 0.40;        // communication severity high at >= 40 %

inline constexpr double kCapacityFull = 1.00;    // footprint >= 100 %: severity high
inline constexpr int64_t kSwapMinFaults = 100;   // major faults of the process during training
inline constexpr double kSwapFaultsPerSecond = 10.0;

inline constexpr double kRooflineMajority = 0.50;     // op time share that decides left vs right
inline constexpr double kNearBandwidthRoof = 0.50;    // achieved GB/s >= 50 % of the roof
inline constexpr double kBandwidthHigh = 0.70;        // >= 70 % of op time left: severity high
inline constexpr double kComputeAtRoof = 0.50;        // >= 50 % of peak GFLOP/s: severity high

inline constexpr double kOverheadFinding = 0.30;      // >= 30 % of step time outside the ops
inline constexpr double kOverheadHigh = 0.50;
inline constexpr double kEvalCheckpointFinding = 0.20;

inline constexpr int64_t kWindows = 20;               // about this many windows
inline constexpr int64_t kWindowMinSteps = 10;

inline bool reaches(double fraction, double threshold) { return fraction >= threshold - kTolerance; }

}  // namespace trainbench::profiler::rules
