#pragma once
// The engine's instrumentation: what it tells the profiler about where time goes. The engine calls
// it; the profiler library implements the sink that takes the events away. Three parts:
//  * Phases, always on: every thread keeps the exclusive time it spent in each part of a training
//    step (input wait, forward, backward, optimizer, communication, evaluation, checkpoint, other).
//    A PhaseScope switches the calling thread's phase and back; nested scopes charge the inner one.
//    takePhases() returns what the thread spent since its last take (the per-step breakdown).
//  * Zones and counters, while a trace is on: scoped zones (begin/end) and counter samples go into a
//    fixed-size per-thread buffer: no lock and no allocation on the hot path (the buffer is
//    allocated once, at the thread's first event). drainTrace() hands them to a TraceSink.
//  * Op statistics, always on: engine/instrument/opstats.h.
// Built with TRAINBENCH_PROFILING=0 (CMake option TRAINBENCH_PROFILING=OFF) all of it compiles to
// nothing: scopes are empty, takePhases() returns zeros, no event is ever recorded.
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#ifndef TRAINBENCH_PROFILING
#define TRAINBENCH_PROFILING 1
#endif

namespace trainbench::engine::prof {

inline constexpr bool kEnabled = TRAINBENCH_PROFILING != 0;

// ---------------------------------------------------------------------------------------------
// Phases

// Output: a prediction run writing its predictions (trainbench-cli predict); training has none.
enum class Phase : uint8_t { Input, Forward, Backward, Optimizer, Communication, Evaluation, Checkpoint, Other, Output };
inline constexpr int kPhaseCount = 9;
// "input", "forward", "backward", "optimizer", "communication", "evaluation", "checkpoint", "other",
// "output"
const char* phaseName(Phase phase);

// Seconds per phase.
struct PhaseTimes {
    std::array<double, kPhaseCount> seconds{};
    double& operator[](Phase p) { return seconds[static_cast<size_t>(p)]; }
    double operator[](Phase p) const { return seconds[static_cast<size_t>(p)]; }
    double total() const;
    PhaseTimes& operator+=(const PhaseTimes& o);
};
PhaseTimes operator-(PhaseTimes a, const PhaseTimes& b);

inline int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

namespace detail {
// Trivially constructible so that the thread_local needs no guard or wrapper call.
struct PhaseState {
    int64_t ns[kPhaseCount];
    int64_t since;  // when the running phase was last charged (0: not started)
    uint8_t current;  // a Phase; zero-initialised = Input, set by the first resetPhases()/scope
    bool started;
};
inline thread_local PhaseState tlsPhase{};

inline void charge(PhaseState& s, int64_t t) {
    if (s.started) s.ns[s.current] += t - s.since;
    s.since = t;
    s.started = true;
}
}  // namespace detail

// Starts this thread's phase clock afresh, in phase Other, dropping anything charged before.
void resetPhases();
// What this thread spent in each phase since the last take (or reset), charging the running phase
// up to now; starts the next interval. Zeros when profiling is compiled out.
PhaseTimes takePhases();
// The same without starting a new interval: a part of a step (one replica's share) is the
// difference of two peeks.
PhaseTimes peekPhases();

class PhaseScope {
public:
    explicit PhaseScope(Phase phase) noexcept {
        if constexpr (kEnabled) {
            detail::PhaseState& s = detail::tlsPhase;
            if (!s.started) s.current = static_cast<uint8_t>(Phase::Other);
            detail::charge(s, nowNs());
            previous_ = s.current;
            s.current = static_cast<uint8_t>(phase);
        } else {
            (void)phase;
        }
    }
    ~PhaseScope() {
        if constexpr (kEnabled) {
            detail::PhaseState& s = detail::tlsPhase;
            detail::charge(s, nowNs());
            s.current = previous_;
        }
    }
    PhaseScope(const PhaseScope&) = delete;
    PhaseScope& operator=(const PhaseScope&) = delete;

private:
    uint8_t previous_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Zones and counters (tracing)

// Where a zone or counter comes from; one static instance per call site (TB_ZONE makes it), or one
// per op (opstats.h). name and category must outlive the trace.
struct ZoneSite {
    const char* name;
    const char* category;  // "step", "phase", "op", "pipeline", "comm", ... (Chrome trace "cat")
};

struct TraceEvent {
    enum class Kind : uint8_t { Zone, Counter, Instant };
    const ZoneSite* site = nullptr;
    int64_t begin_ns = 0;  // steady clock; a counter or instant: when it was sampled
    int64_t end_ns = 0;    // zones only
    double value = 0.0;    // counters: the sample; zones: an argument (the step of a "step" zone), NaN if none
    Kind kind = Kind::Zone;
};

// Thread identity in a trace: a small number in order of first event, and a name.
struct TraceThread {
    int index = 0;
    std::string name;
    // Events lost since the previous drain because the thread's buffer was full (recorded after
    // the buffer filled, before a drain emptied it).
    uint64_t dropped = 0;
};

class TraceSink {
public:
    virtual ~TraceSink() = default;
    // A thread's events since the previous drain, in the order they ended (a zone is recorded when
    // it ends, so a nested zone comes before the zone around it). Called for every thread with
    // events or drops since the previous drain; `events` is empty when there were only drops.
    virtual void events(const TraceThread& thread, std::span<const TraceEvent> events) = 0;
};

namespace detail {
inline std::atomic<bool> gTracing{false};
void record(const TraceEvent& event);
}  // namespace detail

// Events per thread kept between two drains; more are dropped (and counted).
inline constexpr size_t kTraceBufferEvents = size_t{1} << 16;

inline bool tracing() {
    if constexpr (kEnabled) return detail::gTracing.load(std::memory_order_relaxed);
    return false;
}
// Turns event recording on or off for every thread.
void setTracing(bool on);
// Names the calling thread in traces ("trainer", "replica 1", "pipeline read 0", ...).
void setThreadName(const std::string& name);
// Hands every thread's events recorded since the last drain to `sink` (thread by thread). Safe to
// call while other threads record: an event is either handed over now or at the next drain.
void drainTrace(TraceSink& sink);

class ZoneScope {
public:
    explicit ZoneScope(const ZoneSite* site, double arg = __builtin_nan("")) noexcept {
        if constexpr (kEnabled) {
            if (tracing()) {
                site_ = site;
                arg_ = arg;
                begin_ = nowNs();
            }
        } else {
            (void)site;
            (void)arg;
        }
    }
    ~ZoneScope() { end(); }
    // Ends the zone before the scope does (once; the destructor then records nothing).
    void end() {
        if constexpr (kEnabled) {
            if (site_) detail::record({site_, begin_, nowNs(), arg_, TraceEvent::Kind::Zone});
            site_ = nullptr;
        }
    }
    ZoneScope(const ZoneScope&) = delete;
    ZoneScope& operator=(const ZoneScope&) = delete;

private:
    const ZoneSite* site_ = nullptr;
    int64_t begin_ = 0;
    double arg_ = 0.0;
};

// A counter sample (queue fill, bytes in flight, ...), recorded while tracing.
inline void counter(const ZoneSite* site, double value) {
    if constexpr (kEnabled) {
        if (tracing()) {
            const int64_t t = nowNs();
            detail::record({site, t, t, value, TraceEvent::Kind::Counter});
        }
    } else {
        (void)site;
        (void)value;
    }
}

}  // namespace trainbench::engine::prof

#define TB_PROF_CAT2(a, b) a##b
#define TB_PROF_CAT(a, b) TB_PROF_CAT2(a, b)
// A zone over the rest of the enclosing scope: TB_ZONE("pipeline", "decode");
#define TB_ZONE(category, name)                                                                     \
    static constexpr ::trainbench::engine::prof::ZoneSite TB_PROF_CAT(tbZoneSite_, __LINE__){name, category}; \
    ::trainbench::engine::prof::ZoneScope TB_PROF_CAT(tbZone_, __LINE__)(&TB_PROF_CAT(tbZoneSite_, __LINE__))
// The same with a numeric argument (shown in the trace): TB_ZONE_ARG("step", "step", step);
#define TB_ZONE_ARG(category, name, arg)                                                            \
    static constexpr ::trainbench::engine::prof::ZoneSite TB_PROF_CAT(tbZoneSite_, __LINE__){name, category}; \
    ::trainbench::engine::prof::ZoneScope TB_PROF_CAT(tbZone_, __LINE__)(&TB_PROF_CAT(tbZoneSite_, __LINE__), \
                                                                          static_cast<double>(arg))
// A phase over the rest of the enclosing scope, with a zone of the phase's name while tracing.
#define TB_PHASE(phase)                                                                             \
    ::trainbench::engine::prof::PhaseScope TB_PROF_CAT(tbPhase_, __LINE__)(::trainbench::engine::prof::Phase::phase); \
    TB_ZONE("phase", ::trainbench::engine::prof::detail::phaseZoneName(::trainbench::engine::prof::Phase::phase))

namespace trainbench::engine::prof::detail {
constexpr const char* phaseZoneName(Phase p) {
    constexpr const char* names[] = {"input", "forward", "backward", "optimizer", "communication", "evaluation",
                                     "checkpoint", "other", "output"};
    return names[static_cast<size_t>(p)];
}
}  // namespace trainbench::engine::prof::detail
