#include "app/loadtest/loaddriver.h"

#include "app/loadtest/httpclientconnection.h"
#include "app/loadtest/responsecheck.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <thread>

#include "engine/net/hostport.h"

namespace trainbench::app::loadtest {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

double threadCpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

thread_local int tlsThread = -1;  // which client thread this is: its Recorder

// What one client thread saw; merged after the run, so the threads never share a counter.
struct Recorder {
    std::vector<QueryRecord> records;
    LatencyHistogram latency, service;
    std::map<std::string, int64_t> errors;
    std::pair<int64_t, std::string> firstError{INT64_MAX, {}};
    int64_t malformedTiming = 0;
};

class Driver {
public:
    Driver(const PredictTarget& target, const RequestSet& requests, const DriverPlan& plan, const ClientLimits& limits)
        : requests_(requests), plan_(plan), limits_(limits), timer_(io_), recorders_(static_cast<size_t>(limits.threads)) {
        asio::ip::tcp::resolver resolver(io_);
        boost::system::error_code ec;
        const auto found = resolver.resolve(target.host, std::to_string(target.port), ec);
        if (ec || found.empty())
            throw LoadTestError("cannot resolve " + engine::net::formatHostPort(target.host, target.port) + ": " +
                                ec.message());
        peer_ = found.begin()->endpoint();
    }

    Measurement run();

private:
    Clock::time_point now() const { return Clock::now(); }
    int64_t sinceStart(Clock::time_point t) const { return (t - start_).count(); }
    HttpClientConnection* newConnection();
    void warmUp();
    void scheduleNext();
    void issue(QueryRecord rec);
    void start(HttpClientConnection* conn, QueryRecord rec);
    void complete(HttpClientConnection* conn, QueryRecord rec, HttpExchange&& x);
    void recordResult(QueryRecord& rec, HttpExchange& x);
    bool closedLoopContinues() const;
    void finishOne();

    const RequestSet& requests_;
    const DriverPlan& plan_;
    const ClientLimits& limits_;
    asio::io_context io_;  // before the connections: they are destroyed first
    asio::steady_timer timer_;
    asio::ip::tcp::endpoint peer_;
    std::vector<std::unique_ptr<HttpClientConnection>> connections_;
    std::mutex poolMu_;  // connections_, idle_, waiting_
    std::vector<HttpClientConnection*> idle_;
    std::deque<QueryRecord> waiting_;  // issued, no connection free yet
    std::vector<Recorder> recorders_;
    Clock::time_point start_;
    size_t next_ = 0;  // open loop: the next arrival (the timer's handler only)
    std::atomic<int64_t> nextId_{0}, finished_{0}, streamsEnded_{0};
    std::mutex doneMu_;
    std::condition_variable doneCv_;
    bool done_ = false;
    Clock::time_point lastDone_;
};

HttpClientConnection* Driver::newConnection() {
    connections_.push_back(std::make_unique<HttpClientConnection>(io_, peer_, limits_.maxResponseBytes));
    return connections_.back().get();
}

void Driver::warmUp() {
    const int n = std::min(plan_.warmConnections, plan_.maxConnections);
    // Shared with the connect handlers, which may outlive this call when it gives up waiting.
    struct Waiting {
        std::mutex mu;
        std::condition_variable cv;
        int pending = 0;
        std::string error;
    };
    const auto w = std::make_shared<Waiting>();
    w->pending = n;
    for (int i = 0; i < n; ++i) {
        HttpClientConnection* conn = newConnection();
        idle_.push_back(conn);
        asio::post(io_, [this, w, conn] {
            conn->connect(now() + limits_.connectTimeout, [w](std::string e) {
                std::lock_guard lock(w->mu);
                if (!e.empty() && w->error.empty()) w->error = e;
                if (--w->pending == 0) w->cv.notify_all();
            });
        });
    }
    std::unique_lock lock(w->mu);
    // The connects have the deadline; this wait only outlives them by a margin.
    w->cv.wait_for(lock, limits_.connectTimeout + std::chrono::seconds(1), [&] { return w->pending == 0; });
    if (w->pending != 0) throw LoadTestError("the warm connections did not finish connecting");
    if (!w->error.empty()) throw LoadTestError(w->error);
}

void Driver::scheduleNext() {
    if (next_ >= plan_.arrivals.size()) return;
    timer_.expires_at(start_ + std::chrono::nanoseconds(plan_.arrivals[next_]));
    timer_.async_wait([this](boost::system::error_code ec) {
        if (ec) return;
        // Every query already due goes out now: a late timer must not thin the schedule.
        while (next_ < plan_.arrivals.size() && start_ + std::chrono::nanoseconds(plan_.arrivals[next_]) <= now()) {
            QueryRecord rec;
            rec.id = static_cast<int64_t>(next_);
            rec.scheduled = plan_.arrivals[next_++];
            issue(rec);
        }
        scheduleNext();
    });
}

void Driver::issue(QueryRecord rec) {
    rec.issued = sinceStart(now());
    HttpClientConnection* conn = nullptr;
    {
        std::lock_guard lock(poolMu_);
        if (!idle_.empty()) {
            conn = idle_.back();
            idle_.pop_back();
        } else if (static_cast<int>(connections_.size()) < plan_.maxConnections) {
            conn = newConnection();
        } else {
            waiting_.push_back(rec);
            return;
        }
    }
    start(conn, rec);
}

void Driver::start(HttpClientConnection* conn, QueryRecord rec) {
    const auto t = now();
    rec.sent = sinceStart(t);
    conn->exchange(requests_.request(rec.id), t + limits_.requestTimeout,
                   [this, conn, rec](HttpExchange&& x) mutable { complete(conn, rec, std::move(x)); });
}

void Driver::recordResult(QueryRecord& rec, HttpExchange& x) {
    Recorder& r = recorders_[static_cast<size_t>(tlsThread)];
    std::string reason, message;
    if (!x.error.empty()) {
        reason = "transport";
        message = x.error;
    } else {
        rec.status = x.status;
        rec.written = sinceStart(x.written);
        rec.received = sinceStart(x.received);
        if (!x.timing.empty()) {
            std::string timingError;
            rec.server = parseServerTiming(x.timing, timingError);
            if (!timingError.empty()) ++r.malformedTiming;
        }
        const ResponseVerdict verdict = checkPredictResponse(x.status, x.body, requests_.instancesPerQuery());
        reason = verdict.reason;
        message = verdict.message;
    }
    rec.done = sinceStart(now());
    rec.ok = reason.empty();
    if (rec.ok) {
        r.latency.record(rec.latency());
        r.service.record(rec.done - rec.sent);
    } else {
        ++r.errors[reason];
        if (rec.id < r.firstError.first) r.firstError = {rec.id, "query " + std::to_string(rec.id) + ": " + message};
    }
    r.records.push_back(rec);
}

bool Driver::closedLoopContinues() const {
    const auto elapsed = now() - start_;
    if (elapsed >= plan_.maxDuration || nextId_.load() >= plan_.maxQueries) return false;
    return !(finished_.load() >= plan_.minQueries && elapsed >= plan_.minDuration);
}

void Driver::complete(HttpClientConnection* conn, QueryRecord rec, HttpExchange&& x) {
    recordResult(rec, x);
    std::optional<QueryRecord> next;
    {
        std::lock_guard lock(poolMu_);
        if (!waiting_.empty()) {
            next = waiting_.front();
            waiting_.pop_front();
        } else {
            idle_.push_back(conn);
        }
    }
    if (next) start(conn, *next);
    ++finished_;
    if (plan_.arrivals.empty()) {
        if (closedLoopContinues()) {
            QueryRecord again;
            again.id = nextId_++;
            again.scheduled = sinceStart(now());
            issue(again);
            return;
        }
        if (++streamsEnded_ < plan_.streams) return;
    } else if (finished_.load() < static_cast<int64_t>(plan_.arrivals.size())) {
        return;
    }
    finishOne();
}

void Driver::finishOne() {
    std::lock_guard lock(doneMu_);
    done_ = true;
    lastDone_ = now();
    doneCv_.notify_all();
}

Measurement Driver::run() {
    auto work = asio::make_work_guard(io_);
    std::mutex cpuMu;
    double cpu = 0.0;
    std::vector<std::thread> threads;
    for (int i = 0; i < limits_.threads; ++i)
        threads.emplace_back([&, i] {
            tlsThread = i;
            const double before = threadCpuSeconds();
            io_.run();
            std::lock_guard lock(cpuMu);
            cpu += threadCpuSeconds() - before;
        });
    const auto joinAll = [&] {
        for (auto& t : threads) t.join();
    };
    try {
        warmUp();
    } catch (...) {
        work.reset();
        io_.stop();
        joinAll();
        throw;
    }
    const bool openLoop = !plan_.arrivals.empty();
    // Open loop: a little ahead, so that the first arrival is not late by the time the timer is set.
    start_ = now() + (openLoop ? std::chrono::milliseconds(2) : std::chrono::milliseconds(0));
    asio::post(io_, [this, openLoop] {
        if (openLoop) return scheduleNext();
        for (int s = 0; s < plan_.streams; ++s) {
            QueryRecord rec;
            rec.id = nextId_++;
            rec.scheduled = sinceStart(now());
            issue(rec);
        }
    });
    bool finished = false;
    {
        std::unique_lock lock(doneMu_);
        // Every exchange has its own deadline; this one is for a run that still would not end.
        finished = doneCv_.wait_until(lock, start_ + plan_.maxDuration + limits_.requestTimeout + std::chrono::seconds(1),
                                      [&] { return done_; });
    }
    work.reset();
    if (!finished) io_.stop();
    joinAll();

    Measurement m;
    m.threads = limits_.threads;
    m.cpuSeconds = cpu;
    m.connectionsOpened = static_cast<int>(connections_.size());
    m.issued = openLoop ? static_cast<int64_t>(next_) : nextId_.load();
    m.wallNs = sinceStart(finished ? lastDone_ : now());
    for (Recorder& r : recorders_) {
        m.records.insert(m.records.end(), r.records.begin(), r.records.end());
        m.latency.merge(r.latency);
        m.service.merge(r.service);
        for (const auto& [reason, n] : r.errors) m.errors[reason] += n;
        m.malformedTiming += r.malformedTiming;
    }
    int64_t firstId = INT64_MAX;
    for (const Recorder& r : recorders_)
        if (r.firstError.first < firstId) std::tie(firstId, m.firstError) = r.firstError;
    std::sort(m.records.begin(), m.records.end(), [](const QueryRecord& a, const QueryRecord& b) { return a.id < b.id; });
    m.abandoned = m.issued - static_cast<int64_t>(m.records.size());
    return m;
}

}  // namespace

Measurement measure(const PredictTarget& target, const RequestSet& requests, const DriverPlan& plan,
                    const ClientLimits& limits) {
    if (limits.threads < 1) throw LoadTestError("the client needs at least one thread");
    if (plan.maxConnections < 1) throw LoadTestError("the client needs at least one connection");
    if (plan.arrivals.empty() && plan.streams < 1) throw LoadTestError("a closed-loop run needs at least one stream");
    Driver driver(target, requests, plan, limits);
    return driver.run();
}

}  // namespace trainbench::app::loadtest
