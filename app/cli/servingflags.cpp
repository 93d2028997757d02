#include "app/cli/servingflags.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace trainbench::cli {

void addServingFlags(CLI::App* cmd, ServingFlags& f, bool withListen) {
    if (withListen) {
        cmd->add_option("--bind", f.bind, "Address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface)");
        cmd->add_option("--port", f.port, "Port (default 8501, TF Serving's REST port; 0: any free port)")
            ->check(CLI::Range(0, 65535));
    }
    cmd->add_option("--model-name", f.modelName, "NAME of /v1/models/NAME (default: the run's name or the file's stem)");
    cmd->add_option("--enable-batching", f.enableBatching,
                    "Dynamic batching on or off (default true; off: each request runs alone)");
    cmd->add_option("--max-batch-size", f.maxBatchSize, "Largest batch the model runs (default 1000)")
        ->check(CLI::Range(int64_t{1}, int64_t{65536}));
    cmd->add_option("--batch-timeout-micros", f.batchTimeoutMicros,
                    "How long an underfull batch waits for more requests (default 0)")
        ->check(CLI::Range(int64_t{0}, int64_t{10'000'000}));
    cmd->add_option("--num-batch-threads", f.numBatchThreads, "Threads running batches (default 0: the cores)")
        ->check(CLI::Range(int64_t{0}, int64_t{1024}));
    cmd->add_option("--max-enqueued-batches", f.maxEnqueuedBatches,
                    "Batches waiting before a request is refused with 503 (default 10)")
        ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
    cmd->add_option("--allowed-batch-sizes", f.allowedBatchSizes,
                    "Pad batches to these sizes: 8,32,128 (increasing, the last = --max-batch-size)")
        ->delimiter(',');
    cmd->add_option("--instances", f.instances, "Model instances (default 0: one per batch thread)")
        ->check(CLI::Range(int64_t{0}, int64_t{1024}));
    cmd->add_option("--threads-per-instance", f.threadsPerInstance, "Compute threads of each instance (default 1; 0: every core)")
        ->check(CLI::Range(0, 1024));
    cmd->add_option("--request-threads", f.requestThreads, "Threads decoding and encoding JSON (default 0: the cores)")
        ->check(CLI::Range(int64_t{0}, int64_t{1024}));
    cmd->add_option("--precision", f.precision, "fp32 or int8 (post-training static quantization at start; default fp32)")
        ->check(CLI::IsMember({"fp32", "int8"}));
    cmd->add_option("--calibration-batches", f.calibrationBatches,
                    "int8: training batches of 64 examples the activation ranges are calibrated on (default 4)")
        ->check(CLI::Range(int64_t{1}, int64_t{10000}));
    cmd->add_option("--auth-token-file", f.authTokenFile,
                    "Require \"Authorization: Bearer TOKEN\", TOKEN the file's first line");
}

namespace {

std::string readToken(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument("--auth-token-file " + path + ": cannot be read");
    std::string token;
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
    if (token.empty()) throw std::invalid_argument("--auth-token-file " + path + ": its first line is empty");
    for (unsigned char c : token)
        if (c < 0x21 || c > 0x7e)
            throw std::invalid_argument("--auth-token-file " + path +
                                        ": the token must be printable ASCII without spaces (it goes in an HTTP header)");
    return token;
}

}  // namespace

engine::serving::ServingOptions servingOptions(const ServingFlags& f) {
    engine::serving::ServingOptions o;
    o.bind_address = f.bind;
    o.port = static_cast<uint16_t>(f.port);
    o.batching.enable_batching = f.enableBatching;
    o.batching.max_batch_size = f.maxBatchSize;
    o.batching.batch_timeout_micros = f.batchTimeoutMicros;
    o.batching.num_batch_threads = f.numBatchThreads;
    o.batching.max_enqueued_batches = f.maxEnqueuedBatches;
    o.batching.allowed_batch_sizes = f.allowedBatchSizes;
    if (std::string e = o.batching.validate(); !e.empty()) {
        // The parameter's name is the flag's with '_' for '-'.
        std::string flag = "--" + e.substr(0, e.find_first_of(" ["));
        for (char& c : flag)
            if (c == '_') c = '-';
        throw std::invalid_argument(flag + ": " + e);
    }
    o.instances = f.instances;
    o.request_threads = f.requestThreads;
    if (!f.authTokenFile.empty()) o.auth_token = readToken(f.authTokenFile);
    return o;
}

std::vector<std::string> servingArguments(const ServingFlags& f) {
    std::vector<std::string> a;
    const auto add = [&a](const std::string& flag, const std::string& value) { a.push_back("--" + flag + "=" + value); };
    if (!f.modelName.empty()) add("model-name", f.modelName);
    add("enable-batching", f.enableBatching ? "true" : "false");
    add("max-batch-size", std::to_string(f.maxBatchSize));
    add("batch-timeout-micros", std::to_string(f.batchTimeoutMicros));
    add("num-batch-threads", std::to_string(f.numBatchThreads));
    add("max-enqueued-batches", std::to_string(f.maxEnqueuedBatches));
    if (!f.allowedBatchSizes.empty()) {
        std::string sizes;
        for (int64_t s : f.allowedBatchSizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
        add("allowed-batch-sizes", sizes);
    }
    add("instances", std::to_string(f.instances));
    add("threads-per-instance", std::to_string(f.threadsPerInstance));
    add("request-threads", std::to_string(f.requestThreads));
    add("precision", f.precision);
    add("calibration-batches", std::to_string(f.calibrationBatches));
    if (!f.authTokenFile.empty()) add("auth-token-file", f.authTokenFile);
    return a;
}

std::string checkModelName(const std::string& name) {
    if (name.empty()) return "the model name is empty";
    if (name.size() > 128) return "the model name '" + name.substr(0, 32) + "...' is longer than 128 characters";
    if (name[0] == '.') return "the model name '" + name + "' starts with '.'";
    for (unsigned char c : name)
        if (!(std::isalnum(c) || c == '.' || c == '_' || c == '-'))
            return "the model name '" + name + "' has '" + std::string(1, static_cast<char>(c)) +
                   "'; use letters, digits, '.', '_' and '-' (it is part of the URL /v1/models/NAME)";
    return {};
}

}  // namespace trainbench::cli
