#pragma once
// The report writer's exception type. Messages name what was wrong and where: the run that is not
// in the store ("no run 'fmnist' in runs.db"), the file that could not be written and why.
#include <stdexcept>
#include <string>

namespace trainbench::profiler {

class ReportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace trainbench::profiler
