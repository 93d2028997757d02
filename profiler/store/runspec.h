#pragma once
// What a run process knows about its run before the first step: the columns RunWriter inserts
// into the runs row when the run starts. Identity columns (host, pid, proc_start, boot_id,
// started_at) are filled in by the writer itself.
#include <cstdint>
#include <optional>
#include <string>

namespace trainbench::profiler {

struct RunSpec {
    std::string name;                        // empty: the store names it "run-<id>"
    std::optional<std::string> experiment_file;
    std::string config_json = "{}";          // full resolved experiment; must be valid JSON
    std::string strategy = "single";
    std::string devices = "cpu:1";
    int64_t replicas = 1;                    // data-parallel replicas
    std::optional<int64_t> global_batch;
    std::optional<int64_t> threads;
    std::optional<std::string> dataset;
    std::optional<std::string> model;
    std::optional<double> target_accuracy;   // the experiment's target, if it sets one
};

}  // namespace trainbench::profiler
