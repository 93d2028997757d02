#include "app/run/rundata.h"

#include <cmath>

#include "profiler/format/numberformat.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

engine::TrainingData openRunData(const Experiment& x, int64_t globalBatch,
                                 const std::function<void(const std::string&)>& say, profiler::RunWriter* writer) {
    engine::TrainingData data = engine::openTrainingData(x.data, globalBatch, x.train.seed, say);
    say("data: " + data.description);
    if (writer && (data.choice.autotuned || engine::usesStreamingPipeline(x.data)))
        writer->attributes(pipelineAttributes(data));
    return data;
}

std::vector<std::pair<std::string, std::string>> pipelineAttributes(const engine::TrainingData& d) {
    const engine::PipelineChoice& c = d.choice;
    std::vector<std::pair<std::string, std::string>> a = {
        {runattr::kInputSource, d.description},
        {runattr::kInputCycleLength, std::to_string(c.cycle_length)},
        {runattr::kInputParallelReads, c.parallel_reads ? "true" : "false"},
        {runattr::kInputMapParallelCalls, std::to_string(c.map_parallel_calls)},
        {runattr::kInputPrefetch, std::to_string(c.prefetch)},
        {runattr::kInputAutotuned, c.autotuned ? "true" : "false"},
    };
    if (c.autotuned) {
        a.emplace_back(runattr::kInputAutotuneSeconds, profiler::shortestNumber(std::round(c.autotune_seconds * 100) / 100));
        a.emplace_back(runattr::kInputAutotuneTrials, c.notes);
    }
    const engine::StorageConfig& s = d.storage->config();
    a.emplace_back(runattr::kStoragePreset, s.preset);
    a.emplace_back(runattr::kStorageBandwidthMbS, profiler::shortestNumber(s.bandwidth_mb_s));
    a.emplace_back(runattr::kStorageStreamBandwidthMbS, profiler::shortestNumber(s.stream_bandwidth_mb_s));
    a.emplace_back(runattr::kStorageOpenLatencyMs, profiler::shortestNumber(s.open_latency_ms));
    a.emplace_back(runattr::kStorageRequestLatencyMs, profiler::shortestNumber(s.request_latency_ms));
    return a;
}

}  // namespace trainbench::app
