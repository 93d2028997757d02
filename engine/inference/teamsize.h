#pragma once
// Sets the calling thread's OpenMP team size for a scope (the executors build and run a plan with
// the team its batch size earns: CompileOptions::macs_per_thread).
#include <omp.h>

#include <cstdint>
#include <map>
#include <string>

#include "engine/graph/graph.h"

namespace trainbench::engine::inference {

class TeamSize {
public:
    explicit TeamSize(int threads) : before_(omp_get_max_threads()) {
        if (threads != before_) omp_set_num_threads(threads);
    }
    ~TeamSize() {
        if (omp_get_max_threads() != before_) omp_set_num_threads(before_);
    }
    TeamSize(const TeamSize&) = delete;
    TeamSize& operator=(const TeamSize&) = delete;

private:
    int before_;
};

// Multiply-adds of one example through the graph's convolutions and Gemms.
int64_t macsPerExample(const graph::Graph& graph, const std::map<std::string, graph::Dims>& shapes);
// The team for n examples: one thread per macsPerThread multiply-adds, at least one, at most the
// calling thread's OpenMP budget.
int teamFor(int64_t n, int64_t macsPerExample, int64_t macsPerThread);

}  // namespace trainbench::engine::inference
