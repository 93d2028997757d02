// `trainbench-cli launch-script`: the same multi_worker or parameter_server job on a cluster, as a
// Slurm batch script or a Kubeflow TFJob manifest. Both give every task the TF_CONFIG that `trainbench-cli run` gives its
// local tasks (Kubeflow's training operator writes it itself, in the same form) and one job token.
// Every string the user controls reaches the files through app/quote/quote.h (shell words, YAML
// scalars) or as a k8sName, never pasted raw.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/experiment/experiment.h"
#include "app/quote/quote.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/rendezvous/rendezvousserver.h"
#include "engine/util/errors.h"

namespace trainbench::cli {

namespace {

// The TFJob's, its Secret's and the Slurm job's name: app::k8sName, 50 characters at most, leaving
// room for the pods' "-worker-<index>" suffixes within 63.
using app::k8sName;

// What the user gave, as it appears in the files' comments: quoted and escaped, on one line.
std::string shown(const std::string& name) { return app::yamlString(name, "the experiment's name"); }

// The worker's arguments. Options in their --key=value form and the file after "--", so that no
// value (a path starting with '-', say) can be read as an option.
std::vector<std::pair<std::string, const char*>> workerArgs(const LaunchScriptArgs& a) {
    std::vector<std::pair<std::string, const char*>> args{{"worker", "the command"}, {"--db=" + a.db, "--db"}};
    for (const std::string& o : a.overrides) args.emplace_back("--set=" + o, "--set");
    args.emplace_back("--", "the command");
    args.emplace_back(a.file, "the experiment file's path");
    return args;
}

// The job's tasks: the chief, then `workers` workers, then `servers` parameter servers.
struct JobShape {
    int workers = 0;  // tasks of type "worker" (besides the chief)
    int servers = 0;  // tasks of type "ps"
    int tasks() const { return 1 + workers + servers; }
    std::string text() const {
        return "1 chief + " + std::to_string(workers) + " worker(s)" +
               (servers ? " + " + std::to_string(servers) + " parameter server(s)" : "");
    }
};

std::string slurmScript(const LaunchScriptArgs& a, const app::Experiment& x, const JobShape& job) {
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# trainbench " << engine::strategyKindName(x.strategy.type) << " job " << shown(x.name) << ": " << job.text() << ", one task per node.\n"
      << "# Written by `trainbench-cli launch-script --slurm`; submit with sbatch.\n"
      << "#SBATCH --job-name=" << k8sName(x.name) << "\n"
      << "#SBATCH --nodes=" << job.tasks() << "\n"
      << "#SBATCH --ntasks-per-node=1\n"
      << "#SBATCH --cpus-per-task=" << (x.strategy.threads_per_replica > 0 ? x.strategy.threads_per_replica : 1) << "\n"
      << "set -euo pipefail\n\n"
      << "# One token for the whole job: every task refuses connections without it.\n"
      << "TRAINBENCH_JOB_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n')\n"
      << "export TRAINBENCH_JOB_TOKEN\n"
      << "# TensorFlow's cluster spec: the first node is the chief, the next NWORKER workers, the last NPS\n"
      << "# parameter servers.\n"
      << "mapfile -t HOSTS < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n"
      << "PORT=" << a.port << "\n"
      << "export NWORKER=" << job.workers << " NPS=" << job.servers << "\n"
      << "addresses() { printf '\"%s:'\"$PORT\"'\",' \"$@\"; }\n"
      << "CLUSTER=\"\\\"chief\\\": [\\\"${HOSTS[0]}:$PORT\\\"]\"\n"
      << "if (( NWORKER > 0 )); then\n"
      << "  WORKERS=$(addresses \"${HOSTS[@]:1:NWORKER}\")\n"
      << "  CLUSTER=\"$CLUSTER, \\\"worker\\\": [${WORKERS%,}]\"\n"
      << "fi\n"
      << "if (( NPS > 0 )); then\n"
      << "  SERVERS=$(addresses \"${HOSTS[@]:$((1 + NWORKER)):NPS}\")\n"
      << "  CLUSTER=\"$CLUSTER, \\\"ps\\\": [${SERVERS%,}]\"\n"
      << "fi\n"
      << "export CLUSTER\n\n"
      << "srun --kill-on-bad-exit=1 bash -c '\n"
      << "  if [ \"$SLURM_PROCID\" = 0 ]; then TASK=\"\\\"type\\\": \\\"chief\\\", \\\"index\\\": 0\";\n"
      << "  elif (( SLURM_PROCID <= NWORKER )); then TASK=\"\\\"type\\\": \\\"worker\\\", \\\"index\\\": $((SLURM_PROCID - 1))\";\n"
      << "  else TASK=\"\\\"type\\\": \\\"ps\\\", \\\"index\\\": $((SLURM_PROCID - 1 - NWORKER))\"; fi\n"
      << "  export TF_CONFIG=\"{\\\"cluster\\\": {$CLUSTER}, \\\"task\\\": {$TASK}}\"\n"
      << "  exec trainbench-cli \"$@\"\n"
      << "' trainbench-task";
    for (const auto& [arg, what] : workerArgs(a)) s << ' ' << app::shellWord(arg, what);
    s << "\n";
    return s.str();
}

// strategy.collective "mpi": srun starts the ranks through PMIx, which wires up Open MPI; a rank's
// place in the job is its MPI rank, so there is no TF_CONFIG to build and no token (the ranks make no
// trainbench connections; MPI's own transport carries the gradients).
std::string slurmMpiScript(const LaunchScriptArgs& a, const app::Experiment& x, int ranks) {
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# trainbench multi_worker job " << shown(x.name) << " over Open MPI: " << ranks << " rank(s), one per node.\n"
      << "# Written by `trainbench-cli launch-script --slurm`; submit with sbatch. Needs Slurm's PMIx plugin\n"
      << "# (srun --mpi=list) and Open MPI on every node; on one machine, `trainbench-cli run` starts mpirun itself.\n"
      << "#SBATCH --job-name=" << k8sName(x.name) << "\n"
      << "#SBATCH --nodes=" << ranks << "\n"
      << "#SBATCH --ntasks-per-node=1\n"
      << "#SBATCH --cpus-per-task=" << (x.strategy.threads_per_replica > 0 ? x.strategy.threads_per_replica : 1) << "\n"
      << "set -euo pipefail\n\n"
      << "srun --mpi=pmix --kill-on-bad-exit=1 trainbench-cli";
    for (const auto& [arg, what] : workerArgs(a)) s << ' ' << app::shellWord(arg, what);
    s << "\n";
    return s.str();
}

}  // namespace

std::string tokenSecretDocument(const std::string& quotedName) {
    return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + quotedName + "\nstringData:\n  token: " +
           app::yamlString(engine::RendezvousServer::randomToken(), "the token") + "\n---\n";
}

namespace {

// Every string value is a double-quoted YAML scalar (app::yamlString), the ones of the user's
// (image, paths, overrides) and the ones made here alike.
std::string kubeflowManifest(const LaunchScriptArgs& a, const app::Experiment& x, const JobShape& job) {
    const std::string name = app::yamlString(k8sName(x.name), "the job's name");
    const std::string secret = app::yamlString(k8sName(x.name) + "-token", "the Secret's name");
    std::string command = "[\"trainbench-cli\"";
    for (const auto& [arg, what] : workerArgs(a)) command += ", " + app::yamlString(arg, what);
    command += "]";
    std::ostringstream s;
    auto replicaSpec = [&](const char* type, int replicas) {
        s << "    " << type << ":\n"
          << "      replicas: " << replicas << "\n"
          << "      restartPolicy: OnFailure\n"
          << "      template:\n"
          << "        spec:\n"
          << "          containers:\n"
          << "            - name: \"tensorflow\"\n"  // the container name the training operator expects
          << "              image: " << app::yamlString(a.image, "--image") << "\n"
          << "              command: " << command << "\n"
          << "              ports:\n"
          << "                - name: \"tfjob-port\"\n"
          << "                  containerPort: " << a.port << "\n"
          << "              env:\n"
          << "                - name: \"TRAINBENCH_JOB_TOKEN\"\n"
          << "                  valueFrom:\n"
          << "                    secretKeyRef: {name: " << secret << ", key: \"token\"}\n";
        if (x.strategy.threads_per_replica > 0)
            s << "              resources:\n"
              << "                requests: {cpu: \"" << x.strategy.threads_per_replica << "\"}\n";
    };
    s << "# trainbench " << engine::strategyKindName(x.strategy.type) << " job " << shown(x.name) << ": " << job.text() << ".\n"
      << "# Written by `trainbench-cli launch-script --kubeflow`; apply with kubectl. The training operator\n"
      << "# sets TF_CONFIG in every pod; the Secret gives them one job token.\n"
      << tokenSecretDocument(secret)
      << "apiVersion: kubeflow.org/v1\n"
      << "kind: TFJob\n"
      << "metadata:\n"
      << "  name: " << name << "\n"
      << "spec:\n"
      << "  tfReplicaSpecs:\n";
    replicaSpec("Chief", 1);
    if (job.workers > 0) replicaSpec("Worker", job.workers);
    if (job.servers > 0) replicaSpec("PS", job.servers);
    return s.str();
}

}  // namespace

int launchScriptCommand(const LaunchScriptArgs& args) {
    app::Experiment x;
    try {
        x = app::loadExperimentFile(args.file, args.overrides);
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitUsage;
    }
    const bool async = x.strategy.type == engine::StrategyKind::ParameterServer;
    if (!engine::isMultiProcess(x.strategy.type)) {
        std::fprintf(stderr,
                     "launch-script: %s has strategy.type '%s'; a cluster job needs 'multi_worker' or 'parameter_server'\n",
                     args.file.c_str(), std::string(engine::strategyKindName(x.strategy.type)).c_str());
        return kExitUsage;
    }
    // multi_worker: the workers are the replicas, the chief the first of them. parameter_server: the
    // chief coordinates, the workers and parameter servers come on top.
    const int replicas = args.workers > 0 ? args.workers : x.strategy.replicas;
    JobShape job;
    job.workers = async ? replicas : replicas - 1;
    job.servers = async ? x.strategy.parameter_servers : 0;
    const int workers = job.tasks();
    const bool mpi = x.strategy.collective == engine::CollectiveBackend::Mpi;
    if (mpi && args.kubeflow) {
        std::fprintf(stderr, "launch-script: %s has strategy.collective 'mpi'; a Kubeflow TFJob starts its pods "
                             "without an MPI launcher (that is the MPI operator's MPIJob, which trainbench does not "
                             "write): use --slurm, or strategy.collective 'gloo'\n", args.file.c_str());
        return kExitUsage;
    }
    std::string text;
    try {
        text = args.kubeflow ? kubeflowManifest(args, x, job) : mpi ? slurmMpiScript(args, x, workers) : slurmScript(args, x, job);
    } catch (const app::QuoteError& e) {
        std::fprintf(stderr, "launch-script: %s\n", e.what());
        return kExitUsage;
    }
    if (args.output.empty()) {
        std::fputs(text.c_str(), stdout);
        return kExitOk;
    }
    try {
        // The manifest holds the job's token (its Secret): for the user's eyes only.
        engine::writeFileAtomically(args.output, text,
                                    {.what = args.kubeflow ? "Kubeflow manifest" : "Slurm script",
                                     .mode = args.kubeflow ? 0600u : 0644u});
    } catch (const engine::FileWriteError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kExitIo;
    }
    std::fprintf(stderr, "wrote %s (%s, %d task(s))\n", args.output.c_str(), args.kubeflow ? "Kubeflow TFJob" : "Slurm batch script",
                 workers);
    return kExitOk;
}

}  // namespace trainbench::cli
