#include "app/loadtest/servingrunverdict.h"

#include <charconv>

#include "profiler/machine/memoryprobe.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace {

namespace runattr = profiler::runattr;

std::optional<int64_t> integer(const std::map<std::string, std::string>& a, const char* key) {
    const auto it = a.find(key);
    if (it == a.end()) return std::nullopt;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || end != it->second.data() + it->second.size()) return std::nullopt;
    return v;
}

}  // namespace

profiler::ServedSettings servedSettings(const profiler::RunRow& run, const std::map<std::string, std::string>& a) {
    profiler::ServedSettings s;
    if (const auto it = a.find(runattr::kServePrecision); it != a.end()) s.precision = it->second;
    if (const auto it = a.find(runattr::kServeEnableBatching); it != a.end()) s.enable_batching = it->second == "1";
    s.max_batch_size = integer(a, runattr::kServeMaxBatchSize);
    s.batch_timeout_micros = integer(a, runattr::kServeBatchTimeoutMicros);
    s.num_batch_threads = integer(a, runattr::kServeNumBatchThreads);
    s.instances = integer(a, runattr::kServeInstances);
    s.threads_per_instance = integer(a, runattr::kServeThreadsPerInstance);
    s.param_count = run.param_count;
    s.client_threads = integer(a, runattr::kLoadtestClientThreads).value_or(1);
    s.host_cores = static_cast<int>(integer(a, runattr::kLoadtestHostCores).value_or(1));
    s.last_level_cache_bytes = profiler::lastLevelCacheBytes();
    return s;
}

profiler::ServingVerdict servingVerdictOf(profiler::RunStore& store, const profiler::RunRow& run) {
    std::map<std::string, std::string> attributes;
    for (auto& [k, v] : store.attributes(run.id)) attributes[k] = v;
    return profiler::classifyServing(store.loadTestPoints(run.id), servedSettings(run, attributes));
}

}  // namespace trainbench::app
