#include "engine/strategy/clusterspec.h"

#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/util/jsonlimits.h"
#include "engine/util/keypath.h"

namespace trainbench::engine {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& where, const std::string& what) {
    throw std::invalid_argument(source + ": " + (where.empty() ? "" : where + ": ") + what);
}

HostPort parseAddress(const json& v, const std::string& source, const std::string& where) {
    if (!v.is_string()) fail(source, where, "expected a \"host:port\" string, got " + v.dump());
    const std::string s = v.get<std::string>();
    const size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
        fail(source, where, "expected \"host:port\", got \"" + s + "\"");
    HostPort hp;
    hp.host = s.substr(0, colon);
    if (hp.host.size() > 2 && hp.host.front() == '[' && hp.host.back() == ']') hp.host = hp.host.substr(1, hp.host.size() - 2);
    const std::string port = s.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (*end != '\0' || p < 1 || p > 65535) fail(source, where, "port '" + port + "' is not a number from 1 to 65535");
    hp.port = static_cast<int>(p);
    return hp;
}

std::vector<HostPort> parseList(const json& cluster, const char* key, const std::string& source) {
    std::vector<HostPort> out;
    if (!cluster.contains(key)) return out;
    const json& list = cluster[key];
    const std::string where = std::string("cluster.") + key;
    if (!list.is_array()) fail(source, where, "expected a list of \"host:port\" strings");
    for (size_t i = 0; i < list.size(); ++i)
        out.push_back(parseAddress(list[i], source, keyPathElement(where, i)));
    return out;
}

bool isLoopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

int ClusterSpec::rank() const {
    if (task_type == "chief") return 0;
    if (task_type == "worker") return static_cast<int>(chief.size()) + task_index;
    return -1;
}

const HostPort& ClusterSpec::coordinator() const { return chief.empty() ? worker.at(0) : chief.front(); }

HostPort ClusterSpec::self() const {
    if (task_type == "chief") return chief.at(static_cast<size_t>(task_index));
    if (task_type == "worker") return worker.at(static_cast<size_t>(task_index));
    if (task_type == "ps") return ps.at(static_cast<size_t>(task_index));
    return {};
}

bool ClusterSpec::loopbackOnly() const {
    for (const auto* list : {&chief, &worker, &ps})
        for (const HostPort& hp : *list)
            if (!isLoopback(hp.host)) return false;
    return true;
}

ClusterSpec parseClusterSpec(const std::string& text, const std::string& source) {
    // TF_CONFIG comes from the environment a cluster manager set: a spec of thousands of tasks is a
    // few hundred KiB and three levels deep.
    constexpr JsonLimits kLimits{1u << 20, 8};
    if (const auto v = checkJsonLimits(text, kLimits))
        fail(source, v->keyPath, v->message + " (" + describeByteOffset(text, v->offset) + ")");
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        fail(source, "", std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) fail(source, "", "expected an object with \"cluster\" and \"task\"");
    for (const auto& [key, value] : j.items()) {
        (void)value;
        if (key != "cluster" && key != "task" && key != "environment" && key != "rpc_layer")
            fail(source, key, "unknown key (TF_CONFIG has cluster, task, environment, rpc_layer)");
    }
    if (!j.contains("cluster") || !j["cluster"].is_object()) fail(source, "cluster", "missing, or not an object");
    const json& cluster = j["cluster"];
    for (const auto& [key, value] : cluster.items()) {
        (void)value;
        if (key != "chief" && key != "worker" && key != "ps" && key != "evaluator")
            fail(source, "cluster." + key, "unknown task type (known: chief, worker, ps)");
    }
    ClusterSpec spec;
    spec.chief = parseList(cluster, "chief", source);
    spec.worker = parseList(cluster, "worker", source);
    spec.ps = parseList(cluster, "ps", source);
    if (spec.chief.size() > 1) fail(source, "cluster.chief", "there can be only one chief, got " + std::to_string(spec.chief.size()));
    if (spec.trainers() == 0) fail(source, "cluster", "needs a chief or at least one worker");
    if (!j.contains("task") || !j["task"].is_object()) fail(source, "task", "missing, or not an object");
    const json& task = j["task"];
    if (!task.contains("type") || !task["type"].is_string()) fail(source, "task.type", "missing, or not a string");
    spec.task_type = task["type"].get<std::string>();
    if (spec.task_type != "chief" && spec.task_type != "worker" && spec.task_type != "ps" && spec.task_type != "evaluator")
        fail(source, "task.type", "'" + spec.task_type + "' is not chief, worker, ps or evaluator");
    if (task.contains("index")) {
        if (!task["index"].is_number_integer()) fail(source, "task.index", "expected an integer, got " + task["index"].dump());
        spec.task_index = task["index"].get<int>();
    }
    const size_t count = spec.task_type == "chief" ? spec.chief.size()
                         : spec.task_type == "worker" ? spec.worker.size()
                         : spec.task_type == "ps" ? spec.ps.size()
                                                  : static_cast<size_t>(spec.task_index) + 1;
    if (spec.task_index < 0 || static_cast<size_t>(spec.task_index) >= count)
        fail(source, "task.index", std::to_string(spec.task_index) + " is outside cluster." + spec.task_type + " (" +
                                       std::to_string(count) + " task(s))");
    // Two tasks on one address would fight over the port.
    std::vector<std::string> seen;
    for (const auto* list : {&spec.chief, &spec.worker, &spec.ps})
        for (const HostPort& hp : *list) {
            for (const std::string& s : seen)
                if (s == hp.text()) fail(source, "cluster", "address " + hp.text() + " is given to two tasks");
            seen.push_back(hp.text());
        }
    return spec;
}

std::string clusterSpecJson(const ClusterSpec& spec) {
    json cluster = json::object();
    auto list = [](const std::vector<HostPort>& v) {
        json a = json::array();
        for (const HostPort& hp : v) a.push_back(hp.text());
        return a;
    };
    if (!spec.chief.empty()) cluster["chief"] = list(spec.chief);
    if (!spec.worker.empty()) cluster["worker"] = list(spec.worker);
    if (!spec.ps.empty()) cluster["ps"] = list(spec.ps);
    return json{{"cluster", cluster}, {"task", {{"type", spec.task_type}, {"index", spec.task_index}}}}.dump();
}

std::optional<ClusterSpec> clusterSpecFromEnvironment() {
    const char* env = std::getenv("TF_CONFIG");
    if (env == nullptr || *env == '\0') return std::nullopt;
    return parseClusterSpec(env, "TF_CONFIG");
}

ClusterSpec withTrainerRank(ClusterSpec spec, int rank, int size) {
    if (spec.trainers() != size || !spec.ps.empty())
        throw std::invalid_argument("TF_CONFIG names " + std::to_string(spec.trainers()) + " trainer(s) and " +
                                    std::to_string(spec.ps.size()) + " parameter server(s), but the MPI job has " +
                                    std::to_string(size) + " rank(s), which must all be trainers");
    if (rank < 0 || rank >= size)
        throw std::invalid_argument("MPI rank " + std::to_string(rank) + " is not in a job of " + std::to_string(size));
    if (!spec.chief.empty() && rank == 0) {
        spec.task_type = "chief";
        spec.task_index = 0;
    } else {
        spec.task_type = "worker";
        spec.task_index = rank - static_cast<int>(spec.chief.size());
    }
    return spec;
}

ClusterSpec localClusterSpec(int workers, int ps, int firstPort) {
    if (workers < 1) throw std::invalid_argument("a job needs at least one worker, got " + std::to_string(workers));
    ClusterSpec spec;
    int port = firstPort;
    spec.chief.push_back({"127.0.0.1", port++});
    for (int i = 1; i < workers; ++i) spec.worker.push_back({"127.0.0.1", port++});
    for (int i = 0; i < ps; ++i) spec.ps.push_back({"127.0.0.1", port++});
    spec.task_type = "chief";
    return spec;
}

}  // namespace trainbench::engine
