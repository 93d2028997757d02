#include "bench/scalingpoint.h"

namespace trainbench::bench {

const std::vector<Workload>& standardWorkloads() {
    static const std::vector<Workload> workloads{
        {"w1", "fmnist-mlp.json", "W1 fmnist-mlp", 128, 60000},
        {"w2", "fmnist-cnn.json", "W2 fmnist-cnn", 128, 60000},
    };
    return workloads;
}

const char* modeName(Mode mode) {
    switch (mode) {
        case Mode::Single: return "single";
        case Mode::Sync: return "sync";
        case Mode::Async: return "async";
        case Mode::SyncMpi: return "sync-mpi";
        case Mode::Mirrored: return "mirrored";
    }
    return "?";
}

std::optional<Mode> parseMode(const std::string& text) {
    for (Mode m : {Mode::Single, Mode::Sync, Mode::Async, Mode::SyncMpi, Mode::Mirrored})
        if (text == modeName(m)) return m;
    return std::nullopt;
}

std::string SweepPoint::runName(bool quick) const {
    return workload->id + "-" + modeName(mode) + "-" + std::to_string(workers) + (quick ? "-quick" : "");
}

std::string SweepPoint::batchLabel() const {
    if (mode == Mode::Single || mode == Mode::Async) return std::to_string(workerBatch);
    const bool even = workload->batch % workers == 0;
    return std::to_string(workers) + "x" + (even ? "" : "~") + std::to_string(workerBatch);
}

std::vector<std::string> runOverrides(const SweepPoint& p, const RunBudget& budget) {
    std::vector<std::string> set{"name=" + p.runName(budget.quick)};
    const std::string threads = std::to_string(p.threads), workers = std::to_string(p.workers);
    switch (p.mode) {
        case Mode::Single:
            set.insert(set.end(), {"strategy.type=single", "train.threads=" + threads,
                                   "train.batch_size=" + std::to_string(p.workload->batch)});
            break;
        case Mode::Sync:  // the workload's batch is the global batch: each worker takes batch / N
        case Mode::SyncMpi:
        case Mode::Mirrored:
            set.insert(set.end(), {p.mode == Mode::Mirrored ? "strategy.type=mirrored" : "strategy.type=multi_worker",
                                   "strategy.replicas=" + workers, "strategy.threads_per_replica=" + threads,
                                   "strategy.batch_scope=global", "train.batch_size=" + std::to_string(p.workload->batch)});
            if (p.mode == Mode::SyncMpi) set.emplace_back("strategy.collective=mpi");
            if (p.mode == Mode::Mirrored) set.emplace_back("train.threads=" + std::to_string(p.threads * p.workers));
            break;
        case Mode::Async:  // no global batch: every worker step is an update on its own batch
            set.insert(set.end(), {"strategy.type=parameter_server", "strategy.replicas=" + workers,
                                   "strategy.parameter_servers=" + std::to_string(p.servers),
                                   "strategy.threads_per_replica=" + threads, "strategy.batch_scope=per_replica",
                                   "train.batch_size=" + std::to_string(p.workerBatch)});
            break;
    }
    if (budget.quick) {
        set.insert(set.end(), {"train.epochs=0", "train.max_steps=" + std::to_string(budget.quickSteps),
                               "train.eval_every_steps=0", "train.eval_at_epoch_end=false",
                               "train.stop_at_target=false"});
    } else {
        set.insert(set.end(), {"train.epochs=" + std::to_string(budget.maxEpochs), "train.max_steps=0",
                               "train.eval_every_steps=100", "train.eval_at_epoch_end=true",
                               "train.stop_at_target=true"});
    }
    return set;
}

bool RunOutcome::completed() const { return run && run->status == profiler::RunStatus::Completed; }

}  // namespace trainbench::bench
