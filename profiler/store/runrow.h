#pragma once
// One row of the runs table, every column, as read back from the store. Nullable columns are
// std::optional. Members are named after their columns; docs/run-store.md gives units and meaning.
#include <cstdint>
#include <optional>
#include <string>

#include "profiler/store/runid.h"
#include "profiler/store/runstatus.h"

namespace trainbench::profiler {

struct RunRow {
    RunId id;
    std::string name;
    RunStatus status = RunStatus::Running;
    std::optional<std::string> experiment_file;
    std::string config_json;                // the full resolved experiment, JSON text
    std::string strategy;                   // "single", "mirrored", ...
    std::string devices;                    // "cpu:1", "gpu-v100:8", ...
    std::optional<int64_t> global_batch;
    std::optional<int64_t> threads;
    std::optional<std::string> dataset;
    std::optional<std::string> model;
    std::string host;                       // gethostname() of the writing process
    int64_t pid = 0;
    std::optional<int64_t> proc_start;      // /proc/<pid>/stat field 22 (clock ticks since boot)
    std::optional<std::string> boot_id;     // /proc/sys/kernel/random/boot_id
    std::string started_at;                 // ISO-8601 UTC, "2024-05-01T12:34:56.789Z"
    std::optional<std::string> ended_at;    // NULL while running and for interrupted runs
    std::optional<std::string> message;     // last error / stop / interruption message

    // Summary, written by RunWriter::finish (steps also when a run is found interrupted).
    std::optional<int64_t> steps;
    std::optional<int64_t> epochs;
    std::optional<double> final_loss;
    std::optional<double> final_accuracy;
    std::optional<double> best_accuracy;
    std::optional<double> time_to_target;   // training seconds; NULL if the target was not reached
    std::optional<int64_t> step_at_target;
    std::optional<double> target_accuracy;  // from the experiment, set when the run starts
    std::optional<double> train_seconds;
    std::optional<double> eval_seconds;
    std::optional<double> throughput;       // samples/s in steady state
    std::optional<std::string> stop_reason;
    std::optional<double> input_seconds;    // total input wait (schema 2)
    std::optional<int64_t> skipped_records; // corrupt records skipped (schema 2)
    std::optional<int64_t> replicas;        // data-parallel replicas (schema 3)
    std::optional<double> comm_seconds;     // total gradient-exchange time, mean over replicas (schema 3)
    std::optional<double> wait_seconds;     // total time idle waiting for the exchange or peers (schema 3)
    std::optional<std::string> verdict;     // what bounds the run, e.g. "input (high)" (schema 5)
    // Time, cost and scale (schema 6).
    std::string clock = "wall";             // "wall", or "virtual": the seconds are emulated devices'
    std::optional<double> host_seconds;     // virtual clock: the host's own training seconds
    std::optional<std::string> device_type;
    std::optional<int64_t> device_count;
    std::optional<double> price_per_device_hour;
    std::optional<double> host_price_per_hour;
    std::optional<double> cost;             // (devices x price + host price) x billed hours, set at the end
    std::optional<int64_t> train_examples;
    std::optional<double> data_fraction;
    std::optional<int64_t> param_count;
    std::optional<int64_t> warm_start_run;
    std::string kind = "train";             // "train", "predict" or "serve" (schema 9)

    // What the run costs per second of its clock, when a price is known: devices and host together.
    std::optional<double> costPerSecond() const {
        if (!price_per_device_hour && !host_price_per_hour) return std::nullopt;
        const double perHour = static_cast<double>(device_count.value_or(1)) * price_per_device_hour.value_or(0.0) +
                               host_price_per_hour.value_or(0.0);
        return perHour / 3600.0;
    }

    friend bool operator==(const RunRow&, const RunRow&) = default;
};

}  // namespace trainbench::profiler
