#include "profiler/machine/hostmodel.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/collective/gloocollective.h"
#include "engine/collective/sharedmemorycollective.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "profiler/machine/cachestore.h"
#include "profiler/machine/calibration.h"
#include "profiler/machine/calibrationlock.h"
#include "profiler/machine/kernelfit.h"
#include "profiler/machine/kernelprobe.h"
#include "profiler/machine/memoryprobe.h"
#include "profiler/store/database.h"
#include "profiler/store/schema.h"
#include "profiler/store/storeerror.h"
#include "profiler/store/transaction.h"

namespace trainbench::profiler {

namespace {

using Clock = std::chrono::steady_clock;

// Migration 0007_host_models.sql creates the table.
constexpr int kHostModelsSchemaVersion = 7;

// The two message sizes a link is inverted from: one latency-bound, one bandwidth-bound.
constexpr size_t kSmallFloats = 256;              // 1 KiB
constexpr size_t kLargeFloats = 2 * 1024 * 1024;  // 8 MiB
constexpr int kRepetitions = 121;  // the slow group comes and goes: enough to weigh it (41 left α ±0.3 ms)
constexpr int kTrimmed = 12;  // left out at either end of the sorted times
// How long each rank computes before each timed all-reduce, as a step's backward pass precedes its
// exchange.
constexpr auto kComputeBeforeExchange = std::chrono::microseconds(1200);

// Keeps this thread busy for `d`, reading `work` over and over as a kernel streams its operands.
void computeFor(Clock::duration d, const std::vector<float>& work) {
    const auto until = Clock::now() + d;
    volatile float sink = 0.0f;
    while (Clock::now() < until) {
        float acc = 0.0f;
        for (float w : work) acc += w;
        sink = sink + acc;
    }
}

// Typical time of a two-rank all-reduce of `count` floats, each rank on its own thread, the ranks
// meeting at a barrier before each one as replicas meet at every step, then computing for a while
// as a step does before it exchanges: an exchange that follows computation costs more than one that
// follows another exchange (on the Zen 5 VM of docs/performance.md, a W1 step's 2 MB all-reduce
// over loopback took 3 ms against 1.7 ms back to back, and α came out 0.12 ms back to back but
// 1.1 ms after computing, which is what real steps paid). `make(rank)` builds a rank's
// collective (on that thread: Gloo connects there). Typical, not the best: a rank that waits for its
// peer sleeps, and the time its core takes to wake is part of every exchange on this host (on a
// virtual machine, 3 to 4 ms whenever the hypervisor has given the idle core to someone else, else
// nothing), not outside interference to be filtered out. The times then fall in two groups, so the
// mean of all but the extremes, which weighs both by how often they happen, is taken rather than the
// median, which jumps from one group to the other.
double typicalAllReduce(const std::function<std::unique_ptr<engine::Collective>(int)>& make, size_t count) {
    std::vector<std::vector<double>> times(2);
    std::exception_ptr error;
    auto rank = [&](int r) {
        try {
            const std::unique_ptr<engine::Collective> c = make(r);
            std::vector<float> data(count, 1.0f);
            c->allReduceSum(data.data(), data.size());  // warm: connections, pages
            const std::vector<float> work(64 * 1024, 1.0f);  // 256 KiB: a layer's operands
            for (int i = 0; i < kRepetitions; ++i) {
                c->barrier();
                computeFor(kComputeBeforeExchange, work);
                const auto start = Clock::now();
                c->allReduceSum(data.data(), data.size());
                times[static_cast<size_t>(r)].push_back(std::chrono::duration<double>(Clock::now() - start).count());
            }
        } catch (...) {
            error = std::current_exception();
        }
    };
    std::thread other(rank, 1);
    rank(0);
    other.join();
    if (error) std::rethrow_exception(error);
    // An all-reduce ends for both ranks when the later one has its result.
    std::vector<double> slower(static_cast<size_t>(kRepetitions));
    for (size_t i = 0; i < slower.size(); ++i) slower[i] = std::max(times[0][i], times[1][i]);
    std::sort(slower.begin(), slower.end());
    double sum = 0.0;
    for (size_t i = kTrimmed; i + kTrimmed < slower.size(); ++i) sum += slower[i];
    return sum / static_cast<double>(slower.size() - 2 * kTrimmed);
}

// A two-node all-reduce of n bytes takes 2 alpha + n beta on a switch and on a ring alike
// (collectivemodel.h: one exchange each way of half the data, twice): invert it from two sizes.
engine::LinkParams invert(double smallSeconds, double largeSeconds) {
    const double smallBytes = kSmallFloats * sizeof(float), largeBytes = kLargeFloats * sizeof(float);
    engine::LinkParams link;
    link.beta_s_per_byte = std::max(1e-15, (largeSeconds - smallSeconds) / (largeBytes - smallBytes));
    link.alpha_s = std::max(0.0, (smallSeconds - smallBytes * link.beta_s_per_byte) / 2.0);
    return link;
}

engine::LinkParams measureSharedMemory() {
    auto group = std::make_shared<engine::SharedMemoryGroup>(2);
    auto make = [&](int r) -> std::unique_ptr<engine::Collective> {
        return std::make_unique<engine::SharedMemoryCollective>(group, r);
    };
    const double small = typicalAllReduce(make, kSmallFloats);
    const double large = typicalAllReduce(make, kLargeFloats);
    return invert(small, large);
}

engine::LinkParams measureLoopback() {
    engine::RendezvousServerConfig sc;
    sc.token = engine::RendezvousServer::randomToken();
    engine::RendezvousServer store(sc);
    const std::string address = store.address();
    int group = 0;
    auto makeFor = [&](const std::string& prefix) {
        return [&, prefix](int r) -> std::unique_ptr<engine::Collective> {
            engine::GlooTransport t;
            t.keyPrefix = prefix;
            return std::make_unique<engine::GlooCollective>(r, 2, address, sc.token, std::chrono::seconds(30), t);
        };
    };
    const double small = typicalAllReduce(makeFor("probe" + std::to_string(group++)), kSmallFloats);
    const double large = typicalAllReduce(makeFor("probe" + std::to_string(group++)), kLargeFloats);
    return invert(small, large);
}

nlohmann::json rateJson(const engine::KernelRate& r) {
    return {{"overhead_s", r.overhead_s},
            {"seconds_per_flop", r.seconds_per_flop},
            {"seconds_per_byte", r.seconds_per_byte},
            {"samples", r.samples}};
}

engine::KernelRate rateFrom(const nlohmann::json& j) {
    engine::KernelRate r;
    r.overhead_s = j.at("overhead_s").get<double>();
    r.seconds_per_flop = j.at("seconds_per_flop").get<double>();
    r.seconds_per_byte = j.at("seconds_per_byte").get<double>();
    r.samples = j.at("samples").get<int>();
    return r;
}

nlohmann::json cacheJson(const CacheCurve& c) {
    nlohmann::json points = nlohmann::json::array();
    for (const CachePoint& p : c.points) points.push_back({p.bytes_per_copy, p.gbs_per_copy});
    return {{"effective_cache_bytes", c.effective_cache_bytes},
            {"slowdown", c.slowdown},
            {"cached_gbs", c.cached_gbs},
            {"points", points}};
}

CacheCurve cacheFrom(const nlohmann::json& j, int copies) {
    CacheCurve c;
    c.copies = copies;
    c.effective_cache_bytes = j.at("effective_cache_bytes").get<double>();
    c.slowdown = j.at("slowdown").get<double>();
    c.cached_gbs = j.at("cached_gbs").get<double>();
    for (const nlohmann::json& p : j.at("points")) c.points.push_back({p.at(0).get<double>(), p.at(1).get<double>()});
    return c;
}

nlohmann::json linkJson(const engine::LinkParams& l) {
    return {{"alpha_s", l.alpha_s}, {"beta_s_per_byte", l.beta_s_per_byte}};
}

engine::LinkParams linkFrom(const nlohmann::json& j) {
    return {j.at("alpha_s").get<double>(), j.at("beta_s_per_byte").get<double>()};
}

std::optional<HostModel> cachedModel(Database& db, const std::string& host, int threads, int replicas) {
    Statement& q =
        db.cached("SELECT model_json FROM host_models WHERE host = ?1 AND threads = ?2 AND replicas = ?3");
    Statement::ResetGuard guard(q);
    q.bindText(1, std::string_view(host)).bindInt(2, threads).bindInt(3, replicas);
    if (!q.step()) return std::nullopt;
    try {
        return hostModelFromJson(q.columnText(0));
    } catch (const std::invalid_argument&) {
        return std::nullopt;  // a damaged row is measured again and replaced
    }
}

void saveModel(Database& db, const HostModel& m) {
    Transaction transaction(db);
    Statement& insert = db.cached(
        "INSERT OR REPLACE INTO host_models (host, threads, replicas, measured_at, model_json) "
        "VALUES (?1, ?2, ?3, ?4, ?5)");
    insert.bindText(1, std::string_view(m.host))
        .bindInt(2, m.threads)
        .bindInt(3, m.replicas)
        .bindText(4, std::string_view(m.measured_at))
        .bindText(5, std::string_view(hostModelJson(m)));
    insert.run();
    transaction.commit();
}

}  // namespace

HostModel measureHostModel(int threads, int replicas) {
    HostModel m;
    m.host = currentHost();
    m.threads = resolveThreads(threads);
    m.replicas = std::max(1, replicas);
    m.measured_at = utcNow();
    m.cache = measureCacheCurve(m.threads, m.replicas, static_cast<double>(lastLevelCacheBytes()));
    const KernelProbes probes = probeKernels(m.threads, m.replicas);
    m.kernels = fitKernelRates(probes.samples, m.threads, m.cache.effective_cache_bytes, m.cache.slowdown);
    fitStepOverhead(probes.steps, m.kernels);
    m.kernel_fit_error = relativeError(m.kernels, probes.samples);
    m.shared_memory = measureSharedMemory();
    m.loopback = measureLoopback();
    return m;
}

std::string hostModelJson(const HostModel& m) {
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [kind, rate] : m.kernels.kinds) kinds[kind] = rateJson(rate);
    const nlohmann::json j = {{"format", 2},
                              {"host", m.host},
                              {"threads", m.threads},
                              {"replicas", m.replicas},
                              {"measured_at", m.measured_at},
                              {"kernel_fit_error", m.kernel_fit_error},
                              {"kernels", {{"kinds", kinds},
                                           {"matrix", rateJson(m.kernels.matrix)},
                                           {"other", rateJson(m.kernels.other)},
                                           {"step_overhead_s", m.kernels.step_overhead_s},
                                           {"step_overhead_per_activation_byte_s", m.kernels.step_overhead_per_activation_byte_s}}},
                              {"cache", cacheJson(m.cache)},
                              {"shared_memory", linkJson(m.shared_memory)},
                              {"loopback", linkJson(m.loopback)}};
    return j.dump();
}

HostModel hostModelFromJson(const std::string& text) {
    try {
        const nlohmann::json j = nlohmann::json::parse(text);
        // Format 1 (before the cache term) is measured again rather than read.
        if (j.at("format").get<int>() != 2) throw std::invalid_argument("host model: unknown format " + j.at("format").dump());
        HostModel m;
        m.host = j.at("host").get<std::string>();
        m.threads = j.at("threads").get<int>();
        m.replicas = j.at("replicas").get<int>();
        m.kernels.threads = m.threads;
        m.kernels.copies = m.replicas;
        m.measured_at = j.at("measured_at").get<std::string>();
        m.kernel_fit_error = j.at("kernel_fit_error").get<double>();
        const nlohmann::json& k = j.at("kernels");
        for (const auto& [kind, rate] : k.at("kinds").items()) m.kernels.kinds[kind] = rateFrom(rate);
        m.kernels.matrix = rateFrom(k.at("matrix"));
        m.kernels.other = rateFrom(k.at("other"));
        m.kernels.step_overhead_s = k.at("step_overhead_s").get<double>();
        m.kernels.step_overhead_per_activation_byte_s = k.at("step_overhead_per_activation_byte_s").get<double>();
        m.cache = cacheFrom(j.at("cache"), m.replicas);
        m.kernels.cache_bytes = m.cache.effective_cache_bytes;
        m.kernels.spill_slowdown = m.cache.slowdown;
        m.shared_memory = linkFrom(j.at("shared_memory"));
        m.loopback = linkFrom(j.at("loopback"));
        return m;
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("host model JSON: ") + e.what());
    }
}

HostModel hostModelFor(const std::string& storePath, int threads, int replicas, bool remeasure) {
    return hostModelFor(storePath, threads, replicas, remeasure, measureHostModel);
}

HostModel hostModelFor(const std::string& storePath, int threads, int replicas, bool remeasure,
                       const HostModelMeasurer& measure) {
    CacheStore store(storePath);
    threads = resolveThreads(threads);
    replicas = std::max(1, replicas);
    const std::string host = currentHost();
    auto lookup = [&]() -> std::optional<HostModel> {
        if (remeasure || !store.has(kHostModelsSchemaVersion)) return std::nullopt;
        return cachedModel(store.db, host, threads, replicas);
    };
    if (auto cached = lookup()) return *cached;
    const CalibrationLock lock;  // one measurement at a time on this host, as for the roofs
    if (auto cached = lookup()) return *cached;
    HostModel m = measure(threads, replicas);
    m.host = host;  // keyed by what was asked for, whatever the measurer filled in
    m.threads = threads;
    m.replicas = replicas;
    if (store.canSave(kHostModelsSchemaVersion)) saveModel(store.db, m);
    return m;
}

}  // namespace trainbench::profiler
