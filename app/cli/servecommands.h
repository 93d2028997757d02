#pragma once
// `trainbench-cli serve` and `trainbench-cli loadtest` (docs/cli.md, docs/serving.md, docs/loadtest.md).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/cli/servingflags.h"

namespace trainbench::app {
struct ServedModelQuality;
}

namespace trainbench::cli {

class StopSignals;

struct ServeArgs {
    std::string model;      // a run id or name of `db`
    std::string db;
    ServingFlags serving;
    std::string readyFile;  // written ("http://HOST:PORT/v1/models/NAME") once the server listens
    bool quiet = false;
};
// Serves until SIGINT/SIGTERM, then answers what is in flight and exits 0.
int serveCommand(const ServeArgs& args, const StopSignals& signals);

struct LoadTestArgs {
    std::string target;  // MODEL (a run: loadtest starts `serve` for it) or http://HOST:PORT[/v1/models/NAME]
    std::string db;
    ServingFlags serving;  // MODEL: the server's settings; a URL without /v1/models/NAME: its modelName is the NAME
    std::string scenario = "single-stream";
    double qps = 100.0;
    std::string latencyBound = "10ms";
    double percentile = 0;  // 0: the scenario's (99 for server)
    bool findMaxQps = false;
    double searchPrecision = 0.02;
    int maxProbes = 16;
    std::vector<int> concurrency = {1, 2, 4, 8};
    double offlineExpectedQps = 0;
    int instancesPerQuery = 1;
    int64_t samples = 256;
    int64_t minQueries = 100;
    std::string minDuration = "2s";
    std::string maxDuration = "60s";
    int clientThreads = 1;
    int maxConnections = 64;
    std::string maxIssueLag = "2ms";
    std::string requestTimeout = "10s";
    uint64_t seed = 0;
    std::string examples;       // an IDX file of u8 images; MODEL: default its test set
    int64_t examplesLimit = 1000;
    std::vector<int64_t> exampleShape;  // each example's nesting; default the IDX's dims (MODEL: the model's)
    double inputScale = 1.0;    // multiply the IDX's bytes by this (1: pixels as stored, as trainbench's server takes them)
    std::string csv, json;      // perf_analyzer CSV, full JSON result
    std::string name;           // the run's name
    bool record = true;         // false: --no-record
    bool quiet = false;
    // Load tests of one run under several configurations (plan-serving --measure): the served
    // model's size and accuracy, measured once per precision and calibration and reused, instead
    // of once per load test. Null: measured each time.
    std::map<std::string, app::ServedModelQuality>* measuredModels = nullptr;
};
int loadtestCommand(const LoadTestArgs& args, const StopSignals& signals);

}  // namespace trainbench::cli
