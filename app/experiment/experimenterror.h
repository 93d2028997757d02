#pragma once
// Everything wrong with an experiment file, collected before anything runs.
#include <stdexcept>
#include <string>
#include <vector>

namespace trainbench::app {

struct ExperimentIssue {
    // A key path ("train.batch_size", "model.layers[3].units"), a text position
    // ("fmnist-mlp.json:7:3"), an override ("--set train.epochs"), or empty for the whole file.
    std::string where;
    std::string message;
};

// Thrown by loadExperimentFile / parseExperiment with every issue found, not just the first.
// what() has one line per issue: "<file>: <key path>: <message>" or "<file>:<line>:<col>: <message>".
class ExperimentError : public std::runtime_error {
public:
    ExperimentError(std::string source, std::vector<ExperimentIssue> issues);

    const std::string& source() const { return source_; }
    const std::vector<ExperimentIssue>& issues() const { return issues_; }

    // The what() text; also usable without throwing.
    static std::string format(const std::string& source, const std::vector<ExperimentIssue>& issues);

private:
    std::string source_;
    std::vector<ExperimentIssue> issues_;
};

}  // namespace trainbench::app
