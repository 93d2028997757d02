#pragma once
// Collects issues while an experiment is checked, so every problem is reported at once.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "app/experiment/experimenterror.h"

namespace trainbench::app {

class IssueList {
public:
    void add(std::string where, std::string message) { items_.push_back({std::move(where), std::move(message)}); }
    std::size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }
    const std::vector<ExperimentIssue>& items() const { return items_; }

private:
    std::vector<ExperimentIssue> items_;
};

}  // namespace trainbench::app
