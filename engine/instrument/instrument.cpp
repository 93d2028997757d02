#include "engine/instrument/instrument.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
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

PhaseTimes operator-(PhaseTimes a, const PhaseTimes& b) {
    for (size_t i = 0; i < a.seconds.size(); ++i) a.seconds[i] -= b.seconds[i];
    return a;
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

PhaseTimes peekPhases() {
    PhaseTimes out;
    if constexpr (kEnabled) {
        detail::PhaseState& s = detail::tlsPhase;
        if (!s.started) return out;
        detail::charge(s, nowNs());
        for (int i = 0; i < kPhaseCount; ++i) out.seconds[static_cast<size_t>(i)] = static_cast<double>(s.ns[i]) * 1e-9;
    }
    return out;
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

// Room for one event, left uninitialised: `new TraceEvent[n]` would run TraceEvent's member
// initialisers over the whole ring (2.5 MiB) at the thread's first event, some 1.5 ms on that
// thread's hot path; uninitialised, the pages are only touched (and faulted in) as events fill them.
struct EventSlot {
    alignas(TraceEvent) unsigned char bytes[sizeof(TraceEvent)];
};
static_assert(std::is_trivially_copyable_v<TraceEvent>);

struct ThreadBuffer {
    TraceThread info;
    std::unique_ptr<EventSlot[]> ring{new EventSlot[kTraceBufferEvents]};
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
    std::memcpy(b->ring[w % kTraceBufferEvents].bytes, &event, sizeof(TraceEvent));
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
        // Drops since the previous drain (the count is taken, so each drop is reported once; a drop
        // racing with this exchange is reported by the next drain).
        b->info.dropped = b->dropped.exchange(0, std::memory_order_relaxed);
        if (to == from && b->info.dropped == 0) continue;
        chunk.resize(static_cast<size_t>(to - from));
        for (uint64_t i = from; i < to; ++i) {
            const EventSlot& slot = b->ring[i % kTraceBufferEvents];
            std::memcpy(&chunk[static_cast<size_t>(i - from)], slot.bytes, sizeof(TraceEvent));
        }
        b->read.store(to, std::memory_order_release);
        sink.events(b->info, chunk);
    }
}

}  // namespace trainbench::engine::prof
