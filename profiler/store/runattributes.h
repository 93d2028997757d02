#pragma once
// The keys of run_attributes: the facts a run records about itself besides its configuration
// (docs/run-store.md gives their meaning). The run path (app/run) writes them; the profiler, the
// CLI and the GUI read them back. Both sides name a key by its constant here, so a misspelt key is a
// compile error instead of a value silently never found. The texts are the store's format (users
// query them with sqlite3): a key's text never changes.
//
// A new attribute: its constant and its row in kRunAttributes (below), the line that writes it,
// the lines that read it, and its sentence in docs/run-store.md. tests/integration/
// cli_runattributes_test.cpp holds the table to what sample runs write.
#include <array>
#include <string_view>

namespace trainbench::profiler::runattr {

// What the run is about to do, recorded when training starts.
inline constexpr char kPlanTotalSteps[] = "plan.total_steps";
inline constexpr char kPlanStepsPerEpoch[] = "plan.steps_per_epoch";
inline constexpr char kPlanTrainExamples[] = "plan.train_examples";
inline constexpr char kPlanTestExamples[] = "plan.test_examples";
inline constexpr char kPlanParamCount[] = "plan.param_count";

// A job restarted from its checkpoint.
inline constexpr char kJobRestarts[] = "job.restarts";
inline constexpr char kJobResumedFromStep[] = "job.resumed_from_step";

// A warm start (train.warm_start).
inline constexpr char kWarmStartCheckpoint[] = "warm_start.checkpoint";
inline constexpr char kWarmStartOptimizer[] = "warm_start.optimizer";
inline constexpr char kWarmStartStep[] = "warm_start.step";

// The input pipeline a streaming or autotuned run used, and the storage emulation in effect.
inline constexpr char kInputSource[] = "input.source";
inline constexpr char kInputCycleLength[] = "input.cycle_length";
inline constexpr char kInputParallelReads[] = "input.parallel_reads";
inline constexpr char kInputMapParallelCalls[] = "input.map_parallel_calls";
inline constexpr char kInputPrefetch[] = "input.prefetch";
inline constexpr char kInputAutotuned[] = "input.autotuned";
inline constexpr char kInputAutotuneSeconds[] = "input.autotune_seconds";
inline constexpr char kInputAutotuneTrials[] = "input.autotune_trials";
inline constexpr char kStoragePreset[] = "storage.preset";
inline constexpr char kStorageBandwidthMbS[] = "storage.bandwidth_mb_s";
inline constexpr char kStorageStreamBandwidthMbS[] = "storage.stream_bandwidth_mb_s";
inline constexpr char kStorageOpenLatencyMs[] = "storage.open_latency_ms";
inline constexpr char kStorageRequestLatencyMs[] = "storage.request_latency_ms";

// Checkpoints the run saves.
inline constexpr char kCheckpointPath[] = "checkpoint.path";
inline constexpr char kCheckpointEverySteps[] = "checkpoint.every_steps";
inline constexpr char kCheckpointAtEnd[] = "checkpoint.at_end";

// A parameter_server run's updates, recorded when it ends.
inline constexpr char kPsServers[] = "ps.servers";
inline constexpr char kPsUpdates[] = "ps.updates";
inline constexpr char kPsStalenessMean[] = "ps.staleness_mean";
inline constexpr char kPsStalenessP50[] = "ps.staleness_p50";
inline constexpr char kPsStalenessP95[] = "ps.staleness_p95";
inline constexpr char kPsStalenessMax[] = "ps.staleness_max";
inline constexpr char kPsRescheduledSteps[] = "ps.rescheduled_steps";
inline constexpr char kPsLostWorkers[] = "ps.lost_workers";

// The emulated devices' virtual clock.
inline constexpr char kVirtualDevice[] = "virtual.device";
inline constexpr char kVirtualReplicas[] = "virtual.replicas";
inline constexpr char kVirtualPrecision[] = "virtual.precision";
inline constexpr char kVirtualTopology[] = "virtual.topology";
inline constexpr char kVirtualInfeedSecondsPerBatch[] = "virtual.infeed_seconds_per_batch";
inline constexpr char kVirtualInfeedSource[] = "virtual.infeed_source";
inline constexpr char kVirtualStepSeconds[] = "virtual.step_seconds";
inline constexpr char kVirtualMatrixUtilisation[] = "virtual.matrix_utilisation";
inline constexpr char kVirtualMemoryFraction[] = "virtual.memory_fraction";
inline constexpr char kVirtualNetworkGbps[] = "virtual.network_gbps";
inline constexpr char kVirtualNetworkLatencyUs[] = "virtual.network_latency_us";
inline constexpr char kVirtualPsMemoryGbs[] = "virtual.ps_memory_gbs";
inline constexpr char kVirtualWorkerStepSeconds[] = "virtual.worker_step_seconds";
inline constexpr char kVirtualRoundSeconds[] = "virtual.round_seconds";
inline constexpr char kVirtualPsBound[] = "virtual.ps_bound";

// The profiler's record of the process that trained: threads, memory footprint, hardware counters,
// the roofs of an emulated device, and the first step op_stats covers.
inline constexpr char kProfileThreads[] = "profile.threads";
inline constexpr char kProfileHostCores[] = "profile.host_cores";
inline constexpr char kMemoryParamsBytes[] = "memory.params_bytes";
inline constexpr char kMemoryGradsBytes[] = "memory.grads_bytes";
inline constexpr char kMemoryOptimizerBytes[] = "memory.optimizer_bytes";
inline constexpr char kMemoryActivationBytes[] = "memory.activation_bytes";
inline constexpr char kMemoryPeakRssBytes[] = "memory.peak_rss_bytes";
inline constexpr char kMemoryDeviceBytes[] = "memory.device_bytes";
inline constexpr char kMemoryDeviceSource[] = "memory.device_source";
inline constexpr char kMemorySwappedPages[] = "memory.swapped_pages";
inline constexpr char kMemoryMajorFaults[] = "memory.major_faults";
// An emulated GPU at >= 90 % of its memory: the pipeline splits that fit, JSON (app/run/splitadvice.h).
inline constexpr char kMemorySplits[] = "memory.splits";
inline constexpr char kHwAvailable[] = "hw.available";
inline constexpr char kHwUnavailableReason[] = "hw.unavailable_reason";
inline constexpr char kHwCycles[] = "hw.cycles";
inline constexpr char kHwInstructions[] = "hw.instructions";
inline constexpr char kHwCacheReferences[] = "hw.cache_references";
inline constexpr char kHwCacheMisses[] = "hw.cache_misses";
inline constexpr char kHwSeconds[] = "hw.seconds";
inline constexpr char kRoofsSource[] = "roofs.source";
inline constexpr char kRoofsPeakGflops[] = "roofs.peak_gflops";
inline constexpr char kRoofsBandwidthGbs[] = "roofs.bandwidth_gbs";
inline constexpr char kOpsFirstStep[] = "ops.first_step";

// A prediction run (trainbench-cli predict): the model it ran (a run of the store), the data split it
// read, where its predictions went.
inline constexpr char kPredictSourceRun[] = "predict.source_run";
inline constexpr char kPredictModel[] = "predict.model";
inline constexpr char kPredictSplit[] = "predict.split";
inline constexpr char kPredictOutput[] = "predict.output";
inline constexpr char kPredictOutputBytes[] = "predict.output_bytes";
inline constexpr char kPredictBatchSize[] = "predict.batch_size";
inline constexpr char kPredictReplicas[] = "predict.replicas";

// A load test (trainbench-cli loadtest), a run of kind "serve": what it measured and how. Its
// settings as JSON are the run's config_json; its points are loadtest_points / loadtest_seconds.
inline constexpr char kLoadtestTarget[] = "loadtest.target";              // the URL measured
inline constexpr char kLoadtestScenario[] = "loadtest.scenario";          // single-stream, server, offline, concurrency
inline constexpr char kLoadtestInstancesPerQuery[] = "loadtest.instances_per_query";
inline constexpr char kLoadtestClientThreads[] = "loadtest.client_threads";
inline constexpr char kLoadtestHostCores[] = "loadtest.host_cores";      // of the machine the load test ran on
inline constexpr char kLoadtestExamples[] = "loadtest.examples";          // where the queries' examples came from
inline constexpr char kLoadtestLatencyBoundMs[] = "loadtest.latency_bound_ms";  // server scenario and the search
inline constexpr char kLoadtestBestQps[] = "loadtest.best_qps";           // --find-max-qps: the highest QPS that met it
inline constexpr char kLoadtestClientBound[] = "loadtest.client_bound";   // "1" when a point found the client the bottleneck
// The server a load test started itself (MODEL given rather than a URL): its model and settings,
// under TF Serving's parameter names.
inline constexpr char kServeModel[] = "serve.model";                      // what was served ("run 12 (fmnist-mlp) of runs.db", a file)
inline constexpr char kServeSourceRun[] = "serve.source_run";             // its run id, when it is a run of this store
inline constexpr char kServePrecision[] = "serve.precision";              // fp32, int8
inline constexpr char kServeEnableBatching[] = "serve.enable_batching";
inline constexpr char kServeMaxBatchSize[] = "serve.max_batch_size";
inline constexpr char kServeBatchTimeoutMicros[] = "serve.batch_timeout_micros";
inline constexpr char kServeNumBatchThreads[] = "serve.num_batch_threads";
inline constexpr char kServeMaxEnqueuedBatches[] = "serve.max_enqueued_batches";
inline constexpr char kServeAllowedBatchSizes[] = "serve.allowed_batch_sizes";  // "" when unset
inline constexpr char kServeInstances[] = "serve.instances";
inline constexpr char kServeThreadsPerInstance[] = "serve.threads_per_instance";
// The served model as measured by the load test when MODEL is a run (an ONNX file has no test set):
// its weights as served and in fp32 (bytes), its top-1 accuracy on the run's full test set as served
// and in fp32 (0 to 1), how many test examples that was, and the int8 model's calibration.
inline constexpr char kServeWeightBytes[] = "serve.weight_bytes";
inline constexpr char kServeFp32WeightBytes[] = "serve.fp32_weight_bytes";
inline constexpr char kServeTestAccuracy[] = "serve.test_accuracy";
inline constexpr char kServeFp32TestAccuracy[] = "serve.fp32_test_accuracy";
inline constexpr char kServeTestExamples[] = "serve.test_examples";
inline constexpr char kServeCalibration[] = "serve.calibration";  // "4 batches x 64 training examples, minmax, …"

// Groups of keys, by their prefix, for readers that show or skip a whole group.
inline constexpr char kInputGroup[] = "input.";
inline constexpr char kStorageGroup[] = "storage.";
inline constexpr char kPsGroup[] = "ps.";
inline constexpr char kVirtualGroup[] = "virtual.";
inline constexpr char kMemoryGroup[] = "memory.";

// Which runs write a key. "Profiled": the process that records the run profiles it, which is
// every run but a parameter_server job (its chief trains nothing itself).
enum class When {
    EveryRun,             // when training starts
    Restarted,            // a job restarted from its checkpoint (strategy.max_restarts)
    WarmStarted,          // train.warm_start
    WarmStartStepKnown,   // a warm start whose checkpoint's metadata says its step
    Streaming,            // a streaming input pipeline (files), or an autotuned one
    Autotuned,            // data.pipeline.autotune
    Checkpointing,        // train.checkpoint_every_steps > 0 or train.checkpoint_at_end
    ParameterServer,      // a parameter_server run, when it ends
    Emulated,             // an emulated device (device.type other than cpu)
    EmulatedInProcess,    // emulated, any strategy but parameter_server
    EmulatedNetwork,      // emulated multi_worker or parameter_server: links between hosts
    EmulatedPs,           // emulated parameter_server
    EmulatedNearCapacity, // emulated, one replica on a GPU at >= 90 % of its memory that a pipeline split relieves
    Profiled,
    ProfiledCounters,     // profiled, the host's hardware counters open (each one it counted)
    ProfiledNoCounters,   // profiled, no hardware counters on the host
    ProfiledEmulated,     // profiled on an emulated device: its roofs
    Predicting,           // a prediction run (trainbench-cli predict), when it starts
    Predicted,            // a prediction run that wrote its predictions
    LoadTesting,          // a load test (run of kind serve), when it starts
    LoadTestSearched,     // a load test with --find-max-qps, when it ends
    LoadTestOwnServer,    // a load test that started its own server (MODEL, not a URL)
    LoadTestOfRun,        // a load test whose MODEL is a run of a store (it has a test set)
    LoadTestOfRunInt8,    // … served in int8
    ProfiledPastWarmup,   // profiled on real devices, and op_stats leave the process's warm-up steps out
                          // (from 10 steps on; an emulated device's op_stats are its cost model's)
};

struct RunAttribute {
    std::string_view key;
    When when;
};

inline constexpr std::array kRunAttributes = {
    RunAttribute{kPlanTotalSteps, When::EveryRun},
    RunAttribute{kPlanStepsPerEpoch, When::EveryRun},
    RunAttribute{kPlanTrainExamples, When::EveryRun},
    RunAttribute{kPlanTestExamples, When::EveryRun},
    RunAttribute{kPlanParamCount, When::EveryRun},
    RunAttribute{kJobRestarts, When::Restarted},
    RunAttribute{kJobResumedFromStep, When::Restarted},
    RunAttribute{kWarmStartCheckpoint, When::WarmStarted},
    RunAttribute{kWarmStartOptimizer, When::WarmStarted},
    RunAttribute{kWarmStartStep, When::WarmStartStepKnown},
    RunAttribute{kInputSource, When::Streaming},
    RunAttribute{kInputCycleLength, When::Streaming},
    RunAttribute{kInputParallelReads, When::Streaming},
    RunAttribute{kInputMapParallelCalls, When::Streaming},
    RunAttribute{kInputPrefetch, When::Streaming},
    RunAttribute{kInputAutotuned, When::Streaming},
    RunAttribute{kInputAutotuneSeconds, When::Autotuned},
    RunAttribute{kInputAutotuneTrials, When::Autotuned},
    RunAttribute{kStoragePreset, When::Streaming},
    RunAttribute{kStorageBandwidthMbS, When::Streaming},
    RunAttribute{kStorageStreamBandwidthMbS, When::Streaming},
    RunAttribute{kStorageOpenLatencyMs, When::Streaming},
    RunAttribute{kStorageRequestLatencyMs, When::Streaming},
    RunAttribute{kCheckpointPath, When::Checkpointing},
    RunAttribute{kCheckpointEverySteps, When::Checkpointing},
    RunAttribute{kCheckpointAtEnd, When::Checkpointing},
    RunAttribute{kPsServers, When::ParameterServer},
    RunAttribute{kPsUpdates, When::ParameterServer},
    RunAttribute{kPsStalenessMean, When::ParameterServer},
    RunAttribute{kPsStalenessP50, When::ParameterServer},
    RunAttribute{kPsStalenessP95, When::ParameterServer},
    RunAttribute{kPsStalenessMax, When::ParameterServer},
    RunAttribute{kPsRescheduledSteps, When::ParameterServer},
    RunAttribute{kPsLostWorkers, When::ParameterServer},
    RunAttribute{kVirtualDevice, When::Emulated},
    RunAttribute{kVirtualReplicas, When::Emulated},
    RunAttribute{kVirtualPrecision, When::Emulated},
    RunAttribute{kVirtualTopology, When::Emulated},
    RunAttribute{kVirtualInfeedSecondsPerBatch, When::Emulated},
    RunAttribute{kVirtualInfeedSource, When::EmulatedInProcess},
    RunAttribute{kVirtualStepSeconds, When::Emulated},
    RunAttribute{kVirtualMatrixUtilisation, When::Emulated},
    RunAttribute{kVirtualMemoryFraction, When::Emulated},
    RunAttribute{kVirtualNetworkGbps, When::EmulatedNetwork},
    RunAttribute{kVirtualNetworkLatencyUs, When::EmulatedNetwork},
    RunAttribute{kVirtualPsMemoryGbs, When::EmulatedPs},
    RunAttribute{kVirtualWorkerStepSeconds, When::EmulatedPs},
    RunAttribute{kVirtualRoundSeconds, When::EmulatedPs},
    RunAttribute{kVirtualPsBound, When::EmulatedPs},
    RunAttribute{kProfileThreads, When::Profiled},
    RunAttribute{kProfileHostCores, When::Profiled},
    RunAttribute{kMemoryParamsBytes, When::Profiled},
    RunAttribute{kMemoryGradsBytes, When::Profiled},
    RunAttribute{kMemoryOptimizerBytes, When::Profiled},
    RunAttribute{kMemoryActivationBytes, When::Profiled},
    RunAttribute{kMemoryPeakRssBytes, When::Profiled},
    RunAttribute{kMemoryDeviceBytes, When::Profiled},
    RunAttribute{kMemoryDeviceSource, When::Profiled},
    RunAttribute{kMemorySwappedPages, When::Profiled},
    RunAttribute{kMemoryMajorFaults, When::Profiled},
    RunAttribute{kMemorySplits, When::EmulatedNearCapacity},
    RunAttribute{kHwAvailable, When::Profiled},
    RunAttribute{kHwUnavailableReason, When::ProfiledNoCounters},
    RunAttribute{kHwCycles, When::ProfiledCounters},
    RunAttribute{kHwInstructions, When::ProfiledCounters},
    RunAttribute{kHwCacheReferences, When::ProfiledCounters},
    RunAttribute{kHwCacheMisses, When::ProfiledCounters},
    RunAttribute{kHwSeconds, When::ProfiledCounters},
    RunAttribute{kRoofsSource, When::ProfiledEmulated},
    RunAttribute{kRoofsPeakGflops, When::ProfiledEmulated},
    RunAttribute{kRoofsBandwidthGbs, When::ProfiledEmulated},
    RunAttribute{kOpsFirstStep, When::ProfiledPastWarmup},
    RunAttribute{kPredictSourceRun, When::Predicting},
    RunAttribute{kPredictModel, When::Predicting},
    RunAttribute{kPredictSplit, When::Predicting},
    RunAttribute{kPredictOutput, When::Predicting},
    RunAttribute{kPredictBatchSize, When::Predicting},
    RunAttribute{kPredictReplicas, When::Predicting},
    RunAttribute{kPredictOutputBytes, When::Predicted},
    RunAttribute{kLoadtestTarget, When::LoadTesting},
    RunAttribute{kLoadtestScenario, When::LoadTesting},
    RunAttribute{kLoadtestInstancesPerQuery, When::LoadTesting},
    RunAttribute{kLoadtestClientThreads, When::LoadTesting},
    RunAttribute{kLoadtestHostCores, When::LoadTesting},
    RunAttribute{kLoadtestExamples, When::LoadTesting},
    RunAttribute{kLoadtestLatencyBoundMs, When::LoadTesting},
    RunAttribute{kLoadtestClientBound, When::LoadTesting},
    RunAttribute{kLoadtestBestQps, When::LoadTestSearched},
    RunAttribute{kServeModel, When::LoadTestOwnServer},
    RunAttribute{kServeSourceRun, When::LoadTestOwnServer},
    RunAttribute{kServePrecision, When::LoadTestOwnServer},
    RunAttribute{kServeEnableBatching, When::LoadTestOwnServer},
    RunAttribute{kServeMaxBatchSize, When::LoadTestOwnServer},
    RunAttribute{kServeBatchTimeoutMicros, When::LoadTestOwnServer},
    RunAttribute{kServeNumBatchThreads, When::LoadTestOwnServer},
    RunAttribute{kServeMaxEnqueuedBatches, When::LoadTestOwnServer},
    RunAttribute{kServeAllowedBatchSizes, When::LoadTestOwnServer},
    RunAttribute{kServeInstances, When::LoadTestOwnServer},
    RunAttribute{kServeThreadsPerInstance, When::LoadTestOwnServer},
    RunAttribute{kServeWeightBytes, When::LoadTestOfRun},
    RunAttribute{kServeFp32WeightBytes, When::LoadTestOfRun},
    RunAttribute{kServeTestAccuracy, When::LoadTestOfRun},
    RunAttribute{kServeFp32TestAccuracy, When::LoadTestOfRun},
    RunAttribute{kServeTestExamples, When::LoadTestOfRun},
    RunAttribute{kServeCalibration, When::LoadTestOfRunInt8},
};

}  // namespace trainbench::profiler::runattr
