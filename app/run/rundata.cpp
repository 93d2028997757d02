#include "app/run/rundata.h"

#include <cmath>

#include "profiler/plan/quantities.h"

namespace trainbench::app {

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
        {"input.source", d.description},
        {"input.cycle_length", std::to_string(c.cycle_length)},
        {"input.parallel_reads", c.parallel_reads ? "true" : "false"},
        {"input.map_parallel_calls", std::to_string(c.map_parallel_calls)},
        {"input.prefetch", std::to_string(c.prefetch)},
        {"input.autotuned", c.autotuned ? "true" : "false"},
    };
    if (c.autotuned) {
        a.emplace_back("input.autotune_seconds", profiler::shortestNumber(std::round(c.autotune_seconds * 100) / 100));
        a.emplace_back("input.autotune_trials", c.notes);
    }
    const engine::StorageConfig& s = d.storage->config();
    a.emplace_back("storage.preset", s.preset);
    a.emplace_back("storage.bandwidth_mb_s", profiler::shortestNumber(s.bandwidth_mb_s));
    a.emplace_back("storage.stream_bandwidth_mb_s", profiler::shortestNumber(s.stream_bandwidth_mb_s));
    a.emplace_back("storage.open_latency_ms", profiler::shortestNumber(s.open_latency_ms));
    a.emplace_back("storage.request_latency_ms", profiler::shortestNumber(s.request_latency_ms));
    return a;
}

}  // namespace trainbench::app
