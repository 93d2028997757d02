#pragma once
// Who takes part in a multi-process job, in TensorFlow's TF_CONFIG form, so that the same file or
// environment variable drives trainbench and TensorFlow jobs alike:
//   {"cluster": {"chief": ["host:port"], "worker": ["host:port", ...], "ps": ["host:port", ...]},
//    "task": {"type": "worker", "index": 1}}
// The chief is rank 0 of the synchronous group; workers follow in their order. "evaluator" tasks,
// which TensorFlow allows outside the cluster, are accepted and take no part in training.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainbench::engine {

struct HostPort {
    std::string host;
    int port = 0;
    std::string text() const { return host + ":" + std::to_string(port); }
};

struct ClusterSpec {
    std::vector<HostPort> chief;   // at most one
    std::vector<HostPort> worker;
    std::vector<HostPort> ps;
    std::string task_type;         // "chief", "worker", "ps" or "evaluator"
    int task_index = 0;

    // Tasks that train (chief first, then workers): the synchronous group's size.
    int trainers() const { return static_cast<int>(chief.size() + worker.size()); }
    // This task's rank among the trainers (chief 0), or -1 for a ps or evaluator task.
    int rank() const;
    // The address of the task that coordinates: the chief, or worker 0 when there is no chief.
    const HostPort& coordinator() const;
    // This task's own address (empty host for an evaluator).
    HostPort self() const;
    // True when every address is a loopback one (127.x.x.x, ::1, localhost).
    bool loopbackOnly() const;
};

// Parses and checks TF_CONFIG text; `source` names it in errors ("TF_CONFIG", a file path).
// Throws std::invalid_argument naming the source and the key path ("cluster.worker[1]: ...").
ClusterSpec parseClusterSpec(const std::string& json, const std::string& source = "TF_CONFIG");
// The TF_CONFIG text for a spec (what launchers put in each task's environment).
std::string clusterSpecJson(const ClusterSpec& spec);
// From the TF_CONFIG environment variable, if it is set.
std::optional<ClusterSpec> clusterSpecFromEnvironment();
// A job of `workers` trainer tasks (the first is the chief) and `ps` parameter servers on this
// machine, on consecutive ports from `firstPort`.
ClusterSpec localClusterSpec(int workers, int ps, int firstPort);
// The same job with this task made the trainer of rank `rank` (chief 0, then the workers): an MPI
// rank's place, where every rank was given the same TF_CONFIG. Throws std::invalid_argument when the
// spec has not `size` trainers or has parameter servers.
ClusterSpec withTrainerRank(ClusterSpec spec, int rank, int size);

}  // namespace trainbench::engine
