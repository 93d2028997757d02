// `trainbench-cli launch-script`: the same multi_worker job on a cluster, as a Slurm batch script or
// a Kubeflow TFJob manifest. Both give every task the TF_CONFIG that `trainbench-cli run` gives its
// local tasks (Kubeflow's training operator writes it itself, in the same form) and one job token.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "app/cli/commands.h"
#include "app/cli/exitcodes.h"
#include "app/experiment/experiment.h"
#include "engine/strategy/storeserver.h"

#include <nlohmann/json.hpp>

namespace trainbench::cli {

namespace {

// A name Kubernetes accepts: lower-case letters, digits and '-', starting with a letter.
std::string k8sName(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        out += (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
    }
    if (out.empty() || !(out[0] >= 'a' && out[0] <= 'z')) out = "tb-" + out;
    return out.substr(0, 50);
}

// A YAML scalar in double quotes (JSON's escaping is valid YAML).
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string shellQuote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The worker's arguments, quoted for the shell.
std::string workerArgs(const LaunchScriptArgs& a) {
    std::string cmd = "worker " + shellQuote(a.file) + " --db " + shellQuote(a.db);
    for (const std::string& o : a.overrides) cmd += " --set " + shellQuote(o);
    return cmd;
}

std::string slurmScript(const LaunchScriptArgs& a, const app::Experiment& x, int workers) {
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# trainbench multi_worker job '" << x.name << "': " << workers << " task(s), one per node.\n"
      << "# Written by `trainbench-cli launch-script --slurm`; submit with sbatch.\n"
      << "#SBATCH --job-name=" << k8sName(x.name) << "\n"
      << "#SBATCH --nodes=" << workers << "\n"
      << "#SBATCH --ntasks-per-node=1\n"
      << "#SBATCH --cpus-per-task=" << (x.strategy.threads_per_replica > 0 ? x.strategy.threads_per_replica : 1) << "\n"
      << "set -euo pipefail\n\n"
      << "# One token for the whole job: the chief refuses connections without it.\n"
      << "TRAINBENCH_JOB_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n')\n"
      << "export TRAINBENCH_JOB_TOKEN\n"
      << "# TensorFlow's cluster spec: the first node is the chief, the others workers.\n"
      << "mapfile -t HOSTS < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n"
      << "PORT=" << a.port << "\n"
      << "CLUSTER=\"\\\"chief\\\": [\\\"${HOSTS[0]}:$PORT\\\"]\"\n"
      << "if (( ${#HOSTS[@]} > 1 )); then\n"
      << "  WORKERS=$(printf '\"%s:'\"$PORT\"'\",' \"${HOSTS[@]:1}\")\n"
      << "  CLUSTER=\"$CLUSTER, \\\"worker\\\": [${WORKERS%,}]\"\n"
      << "fi\n"
      << "export CLUSTER\n\n"
      << "srun --kill-on-bad-exit=1 bash -c '\n"
      << "  if [ \"$SLURM_PROCID\" = 0 ]; then TASK=\"\\\"type\\\": \\\"chief\\\", \\\"index\\\": 0\";\n"
      << "  else TASK=\"\\\"type\\\": \\\"worker\\\", \\\"index\\\": $((SLURM_PROCID - 1))\"; fi\n"
      << "  export TF_CONFIG=\"{\\\"cluster\\\": {$CLUSTER}, \\\"task\\\": {$TASK}}\"\n"
      << "  exec trainbench-cli \"$@\"\n"
      << "' trainbench-task " << workerArgs(a) << "\n";
    return s.str();
}

std::string kubeflowManifest(const LaunchScriptArgs& a, const app::Experiment& x, int workers) {
    const std::string name = k8sName(x.name);
    std::ostringstream s;
    auto replicaSpec = [&](const char* type, int replicas) {
        s << "    " << type << ":\n"
          << "      replicas: " << replicas << "\n"
          << "      restartPolicy: OnFailure\n"
          << "      template:\n"
          << "        spec:\n"
          << "          containers:\n"
          << "            - name: tensorflow\n"  // the container name the training operator expects
          << "              image: " << a.image << "\n"
          << "              command: [\"trainbench-cli\", \"worker\", " << quoted(a.file) << ", \"--db\", " << quoted(a.db);
        for (const std::string& o : a.overrides) s << ", \"--set\", " << quoted(o);
        s << "]\n"
          << "              ports:\n"
          << "                - name: tfjob-port\n"
          << "                  containerPort: " << a.port << "\n"
          << "              env:\n"
          << "                - name: TRAINBENCH_JOB_TOKEN\n"
          << "                  valueFrom:\n"
          << "                    secretKeyRef: {name: " << name << "-token, key: token}\n";
        if (x.strategy.threads_per_replica > 0)
            s << "              resources:\n"
              << "                requests: {cpu: \"" << x.strategy.threads_per_replica << "\"}\n";
    };
    s << "# trainbench multi_worker job '" << x.name << "': 1 chief + " << workers - 1 << " worker(s).\n"
      << "# Written by `trainbench-cli launch-script --kubeflow`; apply with kubectl. The training operator\n"
      << "# sets TF_CONFIG in every pod; the Secret gives them one job token.\n"
      << "apiVersion: v1\n"
      << "kind: Secret\n"
      << "metadata:\n"
      << "  name: " << name << "-token\n"
      << "stringData:\n"
      << "  token: \"" << engine::StoreServer::randomToken() << "\"\n"
      << "---\n"
      << "apiVersion: kubeflow.org/v1\n"
      << "kind: TFJob\n"
      << "metadata:\n"
      << "  name: " << name << "\n"
      << "spec:\n"
      << "  tfReplicaSpecs:\n";
    replicaSpec("Chief", 1);
    if (workers > 1) replicaSpec("Worker", workers - 1);
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
    if (x.strategy.type != "multi_worker") {
        std::fprintf(stderr, "launch-script: %s has strategy.type '%s'; a cluster job needs 'multi_worker'\n",
                     args.file.c_str(), x.strategy.type.c_str());
        return kExitUsage;
    }
    const int workers = args.workers > 0 ? args.workers : x.strategy.replicas;
    const std::string text = args.kubeflow ? kubeflowManifest(args, x, workers) : slurmScript(args, x, workers);
    if (args.output.empty()) {
        std::fputs(text.c_str(), stdout);
        return kExitOk;
    }
    std::ofstream f(args.output, std::ios::binary);
    f << text;
    f.close();
    if (!f) {
        std::fprintf(stderr, "cannot write %s\n", args.output.c_str());
        return kExitIo;
    }
    std::fprintf(stderr, "wrote %s (%s, %d task(s))\n", args.output.c_str(), args.kubeflow ? "Kubeflow TFJob" : "Slurm batch script",
                 workers);
    return kExitOk;
}

}  // namespace trainbench::cli
