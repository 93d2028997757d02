#include "engine/profile/instrument.h"

#include <memory>
#include <mutex>
#include <vector>

namespace trainbench::engine::prof {

const char* phaseName(Phase phase) { return detail::phaseZoneName(phase); }

double PhaseTimes::total() const {
    double t = 0.0;
    for (double s : seconds) t += s;
    return t;
}

PhaseTimes& PhaseTimes::operator+=(const PhaseTimes& o) {
    for (size_t i = 0; i < seconds.size(); ++i) seconds[i] += o.seconds[i];
    return *this;
}

void resetPhases() {
    if constexpr (kEnabled) {
        detail::PhaseState& s = detail::tlsPhase;
        s = detail::PhaseState{};
        s.current = static_cast<uint8_t>(Phase::Other);
        s.since = nowNs();
        s.started = true;
    }
}

PhaseTimes takePhases() {
    PhaseTimes out;
    if constexpr (kEnabled) {
        detail::PhaseState& s = detail::tlsPhase;
        if (!s.started) {
            resetPhases();
            return out;
        }
        detail::charge(s, nowNs());
        for (int i = 0; i < kPhaseCount; ++i) {
            out.seconds[static_cast<size_t>(i)] = static_cast<double>(s.ns[i]) * 1e-9;
            s.ns[i] = 0;
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Trace buffers: one single-producer / single-consumer ring per thread. The owning thread writes
// events at `written`; drainTrace() reads from `read` up to `written` under the registry mutex.

namespace {

struct ThreadBuffer {
    TraceThread info;
    std::unique_ptr<TraceEvent[]> ring{new TraceEvent[kTraceBufferEvents]};
    std::atomic<uint64_t> written{0};
    std::atomic<uint64_t> read{0};
    std::atomic<uint64_t> dropped{0};
};

struct Registry {
    std::mutex mutex;
    std::vector<std::unique_ptr<ThreadBuffer>> threads;
};

Registry& registry() {
    static Registry* r = new Registry;  // never destroyed: threads may record during static teardown
    return *r;
}

thread_local ThreadBuffer* tlsBuffer = nullptr;
thread_local std::string tlsName;

ThreadBuffer* bufferOfThisThread() {
    if (tlsBuffer) return tlsBuffer;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto b = std::make_unique<ThreadBuffer>();
    b->info.index = static_cast<int>(r.threads.size());
    b->info.name = tlsName.empty() ? "thread " + std::to_string(b->info.index) : tlsName;
    tlsBuffer = b.get();
    r.threads.push_back(std::move(b));
    return tlsBuffer;
}

}  // namespace

namespace detail {
void record(const TraceEvent& event) {
    ThreadBuffer* b = bufferOfThisThread();
    const uint64_t w = b->written.load(std::memory_order_relaxed);
    if (w - b->read.load(std::memory_order_acquire) >= kTraceBufferEvents) {
        b->dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    b->ring[w % kTraceBufferEvents] = event;
    b->written.store(w + 1, std::memory_order_release);
}
}  // namespace detail

void setTracing(bool on) {
    if constexpr (kEnabled) detail::gTracing.store(on, std::memory_order_relaxed);
    else (void)on;
}

void setThreadName(const std::string& name) {
    tlsName = name;
    if (tlsBuffer) {
        std::lock_guard<std::mutex> lock(registry().mutex);
        tlsBuffer->info.name = name;
    }
}

void drainTrace(TraceSink& sink) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<TraceEvent> chunk;
    for (auto& b : r.threads) {
        const uint64_t from = b->read.load(std::memory_order_relaxed);
        const uint64_t to = b->written.load(std::memory_order_acquire);
        b->info.dropped = b->dropped.load(std::memory_order_relaxed);
        if (to == from) continue;
        chunk.clear();
        chunk.reserve(static_cast<size_t>(to - from));
        for (uint64_t i = from; i < to; ++i) chunk.push_back(b->ring[i % kTraceBufferEvents]);
        b->read.store(to, std::memory_order_release);
        sink.events(b->info, chunk);
    }
}

}  // namespace trainbench::engine::prof
