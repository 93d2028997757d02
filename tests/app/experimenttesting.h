#pragma once
// Helpers shared by the experiment-file tests.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app/experiment/experiment.h"

namespace trainbench::app::testing {

// The issues parseExperiment reports for text (named "test.json"); a test failure if it accepts it.
inline std::vector<ExperimentIssue> issuesOf(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
        parseExperiment(text, "test.json", overrides);
    } catch (const ExperimentError& e) {
        return e.issues();
    }
    ADD_FAILURE() << "expected an ExperimentError for:\n" << text;
    return {};
}

// The what() text of the error, one line per issue.
inline std::string errorOf(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
        parseExperiment(text, "test.json", overrides);
    } catch (const ExperimentError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected an ExperimentError for:\n" << text;
    return {};
}

// A valid experiment with `extra` spliced in before the model, e.g. R"("train": {"epochs": 2},)".
inline std::string withModel(const std::string& extra = "") {
    return "{" + extra + R"("model": {"preset": "mlp"}})";
}

}  // namespace trainbench::app::testing
