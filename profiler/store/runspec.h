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
    // Time, cost and scale (schema 6).
    std::string clock = "wall";              // "wall", or "virtual" for emulated devices
    std::optional<std::string> device_type;  // device catalog id
    std::optional<int64_t> device_count;     // devices charged (GPUs, TPU chips, hosts)
    std::optional<double> price_per_device_hour;
    std::optional<double> host_price_per_hour;
    std::optional<int64_t> train_examples;   // examples trained on (after data.fraction)
    std::optional<double> data_fraction;
    std::optional<int64_t> param_count;
    std::optional<int64_t> warm_start_run;   // the run whose checkpoint this one started from
    std::string kind = "train";              // "train", "predict" or "serve" (a load test; schema 9)
};

}  // namespace trainbench::profiler
