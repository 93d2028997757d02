#pragma once
// `--trace FILE`: the engine's zones and counters of a window of training steps, written as a
// Chrome trace-event JSON file (the "JSON Object Format"; opens in Perfetto and chrome://tracing).
//
// The trainer drives the window and drains the engine's buffers into the writer:
//
//     ChromeTraceWriter trace({.rank = rank, .firstStep = 100, .lastStep = 104});
//     for (step ...) {
//         trace.beginStep(step);            // at step 100: notes the time, turns tracing on
//         { TB_ZONE_ARG("step", "step", step); ... }
//         trace.endStep(step);              // at step 104: notes the time, turns tracing off
//         prof::drainTrace(trace);          // every step: the engine's buffers hold one step's events
//     }
//     prof::drainTrace(trace);
//     trace.write(path);
//
// Window: the window opens at the first beginStep(s) with firstStep <= s <= lastStep and closes at
// endStep(s) with s >= lastStep (or at a beginStep past lastStep, if that endStep never came); it
// never opens again. Drained events arrive per thread in batches that need not line up with steps
// (a pipeline thread's zone may have begun before the window, an op may end after it closed), so
// they are kept by time: a zone only if it began at or after the window's opening time and ended
// at or before its closing time, a counter if it was sampled in between. Everything else is
// counted as outside the window. With `switchTracing` the writer also turns the engine's tracing
// on at the opening and off at the closing, so that tracing costs nothing outside the window.
//
// Cap: at most maxEvents events are kept. When an event of the window does not fit, the trace is
// cut at the time that event ended: the file then holds all of the window's events that ended
// before the cut and none that ended later (kept ones are dropped again, so that no thread looks
// idle where another thread's events go on), and every event dropped by the cap is counted per
// thread. (Events come in per thread, each thread's in the order they ended, so the cut moves back
// at most once per batch.) The
// engine's own drops (a thread's buffer full between two drains) are counted per thread as well,
// for every drain from the window's opening on. otherData in the file records the window, the
// steps traced with their begin and end times, the cut, and all the counts.
//
// Ids: Perfetto treats pid 0 as the kernel's idle process and tids as unique across processes,
// so a rank's events go to pid rank + 1 (1 without a rank) and tid pid * kTidStride + thread index
// + 1; the process is named "rank N" (or "trainbench") and the threads by prof::setThreadName().
//
// Events: zones are complete events ("ph":"X"; a "step" zone's value as args.step, another's as
// args.value), counters "ph":"C" with args {"<name>": sample} (a NaN or infinite sample is left
// out: JSON cannot hold it), plus process_name/thread_name and sort-index metadata ("ph":"M").
// Times are microseconds since the writer's construction (three decimals, exact to the ns).
// otherData.time_origin_unix_ns is that moment on the system clock, which is how
// mergeChromeTraces() lines up the files of several ranks (as well as the hosts' clocks agree).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/instrument/instrument.h"
#include "profiler/trace/traceerror.h"

namespace trainbench::profiler {

struct ChromeTraceOptions {
    int rank = -1;  // the process's rank in a multi-worker job; -1: a single process
    int64_t firstStep = 0;
    int64_t lastStep = 0;  // inclusive
    size_t maxEvents = 1'000'000;
    bool switchTracing = true;  // turn prof::setTracing() on and off with the window
};

// What a writer holds so far.
struct ChromeTraceStats {
    bool windowOpened = false;
    bool windowClosed = false;
    uint64_t events = 0;          // zones and counters kept
    uint64_t droppedByCap = 0;    // window events left out because of maxEvents
    uint64_t droppedByRing = 0;   // lost in the engine (a thread buffer full between two drains)
    uint64_t outsideWindow = 0;   // drained events not (wholly) inside the window
};

inline constexpr int kTidStride = 100000;
int chromePid(int rank);
int chromeTid(int rank, int threadIndex);
// The file of one rank of a multi-worker job: "<path>.rank<N>".
std::string rankTracePath(const std::string& path, int rank);

class ChromeTraceWriter : public engine::prof::TraceSink {
public:
    // std::invalid_argument if firstStep > lastStep.
    explicit ChromeTraceWriter(ChromeTraceOptions options);
    // Turns tracing off if the writer turned it on and the window is still open.
    ~ChromeTraceWriter() override;
    ChromeTraceWriter(const ChromeTraceWriter&) = delete;
    ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

    void beginStep(int64_t step);
    void endStep(int64_t step);

    // engine::prof::TraceSink: what prof::drainTrace() hands over.
    void events(const engine::prof::TraceThread& thread,
                std::span<const engine::prof::TraceEvent> events) override;

    // Writes the trace (whatever the window holds so far) to `path` atomically; TraceError naming
    // the path if it cannot. The writer keeps its events: write() may be called again.
    void write(const std::string& path) const;

    ChromeTraceStats stats() const;

private:
    using Kind = engine::prof::TraceEvent::Kind;
    struct Site {
        std::string name, category;
        const char* namePtr;  // the ZoneSite's, to tell a reused address from the same site
        const char* categoryPtr;
    };
    struct Thread {
        int index = 0;
        std::string name;
        uint64_t droppedByRing = 0;
        uint64_t droppedByCap = 0;
    };
    struct Event {
        int64_t begin, end;  // steady ns; a counter: both the sample time
        double value;
        uint32_t site;
        uint32_t thread;  // into threads_
        Kind kind;
    };
    struct StepTimes {
        int64_t step, begin, end;  // end 0 while the step runs
    };

    uint32_t siteOf(const engine::prof::ZoneSite* site);
    uint32_t threadOf(const engine::prof::TraceThread& thread);
    void openWindow(int64_t now);
    void closeWindow(int64_t now);
    void cutAt(int64_t end);

    const ChromeTraceOptions options_;
    int64_t originSteadyNs_ = 0;  // the time origin, on the steady clock and on the system clock
    int64_t originUnixNs_ = 0;

    mutable std::mutex mutex_;
    bool opened_ = false, closed_ = false, tracingOn_ = false;
    int64_t windowBegin_ = 0;
    int64_t windowEnd_ = std::numeric_limits<int64_t>::max();
    int64_t cut_ = std::numeric_limits<int64_t>::max();  // keep only events that ended before it
    std::vector<StepTimes> steps_;
    std::vector<Site> sites_;
    std::unordered_map<const engine::prof::ZoneSite*, uint32_t> siteIndex_;
    std::vector<Thread> threads_;
    std::vector<int32_t> threadSlot_;  // by prof thread index; -1: not seen
    std::vector<Event> events_;
    uint64_t droppedByCap_ = 0, droppedByRing_ = 0, outside_ = 0;
};

// Merges the per-rank trace files of a multi-worker job into one (`output`, written atomically):
// all their events, each rank's shifted by the difference of its time origin from the earliest
// one (otherData.time_origin_unix_ns; a file without it is not shifted, and otherData says so).
// The merged otherData lists each input's own otherData under "ranks". TraceError naming the file
// for an input that cannot be read, is not a trace, or shares a pid with another input.
void mergeChromeTraces(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace trainbench::profiler
