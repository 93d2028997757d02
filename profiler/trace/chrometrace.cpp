#include "profiler/trace/chrometrace.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"
#include "profiler/trace/jsonout.h"

namespace trainbench::profiler {

namespace prof = engine::prof;

int chromePid(int rank) { return rank >= 0 ? rank + 1 : 1; }

int chromeTid(int rank, int threadIndex) { return chromePid(rank) * kTidStride + threadIndex + 1; }

std::string rankTracePath(const std::string& path, int rank) { return path + ".rank" + std::to_string(rank); }

ChromeTraceWriter::ChromeTraceWriter(ChromeTraceOptions options) : options_(options) {
    if (options_.firstStep > options_.lastStep)
        throw std::invalid_argument("trace window: first step " + std::to_string(options_.firstStep) +
                                    " is after last step " + std::to_string(options_.lastStep));
    // The system clock read on both sides of the steady one: the origin on the system clock is the
    // middle, off by at most half the (sub-microsecond) gap.
    using namespace std::chrono;
    const int64_t before = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
    originSteadyNs_ = prof::nowNs();
    const int64_t after = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
    originUnixNs_ = before + (after - before) / 2;
}

ChromeTraceWriter::~ChromeTraceWriter() {
    if (tracingOn_) prof::setTracing(false);
}

void ChromeTraceWriter::openWindow(int64_t now) {
    opened_ = true;
    windowBegin_ = now;  // taken before tracing goes on: every zone recorded begins after it
    if (options_.switchTracing) {
        prof::setTracing(true);
        tracingOn_ = true;
    }
}

void ChromeTraceWriter::closeWindow(int64_t now) {
    closed_ = true;
    windowEnd_ = now;  // taken before tracing goes off: a zone still open then ends after it
    if (tracingOn_) {
        prof::setTracing(false);
        tracingOn_ = false;
    }
}

void ChromeTraceWriter::beginStep(int64_t step) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    const int64_t now = prof::nowNs();
    if (!opened_) {
        if (step < options_.firstStep || step > options_.lastStep) return;
        openWindow(now);
    } else if (step > options_.lastStep) {
        closeWindow(now);  // the last step's endStep() never came
        return;
    }
    steps_.push_back({step, now, 0});
}

void ChromeTraceWriter::endStep(int64_t step) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_ || closed_) return;
    const int64_t now = prof::nowNs();
    if (!steps_.empty() && steps_.back().step == step && steps_.back().end == 0) steps_.back().end = now;
    if (step >= options_.lastStep) closeWindow(now);
}

uint32_t ChromeTraceWriter::siteOf(const prof::ZoneSite* site) {
    static constexpr prof::ZoneSite kUnknown{"?", "?"};
    if (!site) site = &kUnknown;
    const char* name = site->name ? site->name : "";
    const char* category = site->category ? site->category : "";
    auto it = siteIndex_.find(site);
    // A site is normally static or lives with its device; comparing the text as well keeps a site
    // destroyed and another built at the same address from taking the old name.
    if (it != siteIndex_.end()) {
        const Site& s = sites_[it->second];
        if (s.namePtr == name && s.categoryPtr == category && s.name == name && s.category == category)
            return it->second;
    }
    const auto index = static_cast<uint32_t>(sites_.size());
    sites_.push_back({name, category, name, category});
    siteIndex_[site] = index;
    return index;
}

uint32_t ChromeTraceWriter::threadOf(const prof::TraceThread& thread) {
    const auto index = static_cast<size_t>(std::max(thread.index, 0));
    if (threadSlot_.size() <= index) threadSlot_.resize(index + 1, -1);
    if (threadSlot_[index] < 0) {
        threadSlot_[index] = static_cast<int32_t>(threads_.size());
        threads_.push_back({thread.index, thread.name, 0, 0});
    }
    Thread& t = threads_[static_cast<size_t>(threadSlot_[index])];
    t.name = thread.name;  // the latest name (a thread may be named after its first events)
    return static_cast<uint32_t>(threadSlot_[index]);
}

void ChromeTraceWriter::cutAt(int64_t end) {
    cut_ = end;
    std::erase_if(events_, [&](const Event& e) {
        if (e.end < cut_) return false;
        ++threads_[e.thread].droppedByCap;
        ++droppedByCap_;
        return true;
    });
}

void ChromeTraceWriter::events(const prof::TraceThread& thread, std::span<const prof::TraceEvent> events) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_) {
        outside_ += events.size();
        return;
    }
    const uint32_t slot = threadOf(thread);
    threads_[slot].droppedByRing += thread.dropped;
    droppedByRing_ += thread.dropped;
    for (const prof::TraceEvent& e : events) {
        const bool zone = e.kind == Kind::Zone;
        const int64_t begin = e.begin_ns;
        const int64_t end = zone ? e.end_ns : e.begin_ns;
        if (begin < windowBegin_ || end > windowEnd_) {
            ++outside_;
            continue;
        }
        if (e.kind == Kind::Counter && !std::isfinite(e.value)) continue;  // JSON cannot hold it
        if (end >= cut_ || events_.size() >= options_.maxEvents) {
            // The first event over the cap sets the cut; an earlier one arriving later (another
            // thread's batch) moves it back, dropping what ended after it.
            if (end < cut_) cutAt(end);
            ++threads_[slot].droppedByCap;
            ++droppedByCap_;
            continue;
        }
        if (events_.empty()) events_.reserve(std::min<size_t>(options_.maxEvents, size_t{1} << 16));
        events_.push_back({begin, end, e.value, siteOf(e.site), slot, e.kind});
    }
}

ChromeTraceStats ChromeTraceWriter::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {opened_, closed_, events_.size(), droppedByCap_, droppedByRing_, outside_};
}

namespace {

void appendKey(std::string& out, const char* key) {
    out += '"';
    out += key;
    out += "\":";
}

// Every event starts with "ph" and "ts", ahead of any string: some Perfetto versions look for "ts"
// in the raw text and stop at the first string they cannot read.
void appendHead(std::string& out, char ph, int64_t tsNs, int pid, int tid) {
    out += "{\"ph\":\"";
    out += ph;
    out += "\",\"ts\":";
    jsonout::appendMicros(out, tsNs);
    out += ",\"pid\":";
    jsonout::appendInt(out, pid);
    out += ",\"tid\":";
    jsonout::appendInt(out, tid);
}

void appendMetadata(std::string& out, int pid, int tid, const char* name, const char* argKey,
                    const std::string* text, int64_t number) {
    appendHead(out, 'M', 0, pid, tid);
    out += ",\"name\":\"";
    out += name;
    out += "\",\"args\":{";
    appendKey(out, argKey);
    if (text) jsonout::appendString(out, *text);
    else jsonout::appendInt(out, number);
    out += "}}";
}

}  // namespace

void ChromeTraceWriter::write(const std::string& path) const try {
    std::lock_guard<std::mutex> lock(mutex_);
    const int rank = options_.rank;
    const int pid = chromePid(rank);
    const auto rel = [&](int64_t ns) { return ns - originSteadyNs_; };

    // Per thread by time; a zone before the zones it encloses (same begin: the longer first; same
    // begin and end: the one recorded later, i.e. the outer one), as viewers nest them in order.
    std::vector<uint32_t> order(events_.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const Event& x = events_[a];
        const Event& y = events_[b];
        const int tx = threads_[x.thread].index, ty = threads_[y.thread].index;
        if (tx != ty) return tx < ty;
        if (x.begin != y.begin) return x.begin < y.begin;
        if (x.end != y.end) return x.end > y.end;
        return a > b;
    });

    engine::AtomicFileWriter file(path, {.what = "trace"});
    std::string& out = file.buffer();

    // displayTimeUnit and otherData first: Perfetto reads them only from the start of the file.
    out += "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"format\":\"trainbench trace 1\",\"rank\":";
    jsonout::appendInt(out, rank);
    out += ",\"pid\":";
    jsonout::appendInt(out, pid);
    out += ",\"time_origin_unix_ns\":";
    jsonout::appendInt(out, originUnixNs_);
    out += ",\"time_origin_steady_ns\":";
    jsonout::appendInt(out, originSteadyNs_);
    out += ",\"first_step\":";
    jsonout::appendInt(out, options_.firstStep);
    out += ",\"last_step\":";
    jsonout::appendInt(out, options_.lastStep);
    out += ",\"window_begin_us\":";
    if (opened_) jsonout::appendMicros(out, rel(windowBegin_));
    else out += "null";
    out += ",\"window_end_us\":";
    if (closed_) jsonout::appendMicros(out, rel(windowEnd_));
    else out += "null";
    out += ",\"steps\":[";
    for (size_t i = 0; i < steps_.size(); ++i) {
        out += i ? ",{\"step\":" : "{\"step\":";
        jsonout::appendInt(out, steps_[i].step);
        out += ",\"begin_us\":";
        jsonout::appendMicros(out, rel(steps_[i].begin));
        out += ",\"end_us\":";
        if (steps_[i].end) jsonout::appendMicros(out, rel(steps_[i].end));
        else out += "null";
        out += '}';
    }
    out += "],\"cut_us\":";
    if (cut_ != std::numeric_limits<int64_t>::max()) jsonout::appendMicros(out, rel(cut_));
    else out += "null";
    out += ",\"max_events\":";
    jsonout::appendInt(out, static_cast<int64_t>(options_.maxEvents));
    out += ",\"events\":";
    jsonout::appendInt(out, static_cast<int64_t>(events_.size()));
    out += ",\"dropped_by_cap\":";
    jsonout::appendInt(out, static_cast<int64_t>(droppedByCap_));
    out += ",\"dropped_by_ring\":";
    jsonout::appendInt(out, static_cast<int64_t>(droppedByRing_));
    out += ",\"outside_window\":";
    jsonout::appendInt(out, static_cast<int64_t>(outside_));
    out += ",\"threads\":[";
    for (size_t i = 0; i < threads_.size(); ++i) {
        const Thread& t = threads_[i];
        out += i ? ",{\"tid\":" : "{\"tid\":";
        jsonout::appendInt(out, chromeTid(rank, t.index));
        out += ",\"index\":";
        jsonout::appendInt(out, t.index);
        out += ",\"name\":";
        jsonout::appendString(out, t.name);
        out += ",\"dropped_by_ring\":";
        jsonout::appendInt(out, static_cast<int64_t>(t.droppedByRing));
        out += ",\"dropped_by_cap\":";
        jsonout::appendInt(out, static_cast<int64_t>(t.droppedByCap));
        out += '}';
    }
    out += "]},\"traceEvents\":[\n";

    const std::string processName = rank >= 0 ? "rank " + std::to_string(rank) : "trainbench";
    appendMetadata(out, pid, pid, "process_name", "name", &processName, 0);
    out += ",\n";
    appendMetadata(out, pid, pid, "process_sort_index", "sort_index", nullptr, std::max(rank, 0));
    for (const Thread& t : threads_) {
        const int tid = chromeTid(rank, t.index);
        out += ",\n";
        appendMetadata(out, pid, tid, "thread_name", "name", &t.name, 0);
        out += ",\n";
        appendMetadata(out, pid, tid, "thread_sort_index", "sort_index", nullptr, t.index);
    }

    for (uint32_t i : order) {
        const Event& e = events_[i];
        const Site& site = sites_[e.site];
        out += ",\n";  // after the metadata events, there is always one before
        const char ph = e.kind == Kind::Zone ? 'X' : e.kind == Kind::Counter ? 'C' : 'i';
        appendHead(out, ph, rel(e.begin), pid, chromeTid(rank, threads_[e.thread].index));
        if (e.kind == Kind::Zone) {
            out += ",\"dur\":";
            jsonout::appendMicros(out, e.end - e.begin);
        } else if (e.kind == Kind::Instant) {
            out += ",\"s\":\"t\"";
        }
        out += ",\"name\":";
        jsonout::appendString(out, site.name);
        out += ",\"cat\":";
        jsonout::appendString(out, site.category);
        if (e.kind == Kind::Counter) {
            out += ",\"args\":{";
            jsonout::appendString(out, site.name);
            out += ':';
            jsonout::appendDouble(out, e.value);
            out += '}';
        } else if (std::isfinite(e.value)) {
            out += site.category == "step" ? ",\"args\":{\"step\":" : ",\"args\":{\"value\":";
            jsonout::appendDouble(out, e.value);
            out += '}';
        }
        out += '}';
        file.flushIfFull();
    }
    out += "\n]}\n";
    file.commit();
} catch (const engine::FileWriteError& e) {
    throw TraceError(e.what());  // the writer's message, as the trace's own error
}

}  // namespace trainbench::profiler
