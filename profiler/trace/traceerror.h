#pragma once
// The trace exporter's exception type. Messages name the file and what went wrong with it
// ("run.trace.rank1: not JSON at byte offset 812: ...", "out.json: cannot write ...: disk full").
#include <stdexcept>
#include <string>

namespace trainbench::profiler {

class TraceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace trainbench::profiler
