#include "app/experiment/experimenterror.h"

#include <utility>

namespace trainbench::app {

ExperimentError::ExperimentError(std::string source, std::vector<ExperimentIssue> issues)
    : std::runtime_error(format(source, issues)), source_(std::move(source)), issues_(std::move(issues)) {}

std::string ExperimentError::format(const std::string& source, const std::vector<ExperimentIssue>& issues) {
    std::string out;
    for (const ExperimentIssue& issue : issues) {
        if (!out.empty()) out += '\n';
        // A text position already starts with the file name (compiler style, so editors can jump to it).
        const bool positioned = !source.empty() && issue.where.rfind(source + ":", 0) == 0;
        if (positioned) {
            out += issue.where;
        } else {
            out += source.empty() ? std::string("experiment") : source;
            if (!issue.where.empty()) out += ": " + issue.where;
        }
        out += ": " + issue.message;
    }
    return out;
}

}  // namespace trainbench::app
