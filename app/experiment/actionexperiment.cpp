#include "app/experiment/actionexperiment.h"

#include <stdexcept>

namespace trainbench::app {

std::string changeText(const profiler::Change& c) {
    return c.key + ": " + (c.from.is_null() ? std::string("(unset)") : c.from.dump()) + " -> " + c.to.dump();
}

nlohmann::json experimentForAction(const profiler::RunRow& run, const profiler::Action& action, int number) {
    if (action.changes.empty())
        throw std::invalid_argument("action " + std::to_string(number) + " (" + action.title +
                                    ") changes nothing in the experiment file (hardware or the model's design): "
                                    "there is nothing to apply");
    nlohmann::json experiment = profiler::applyChanges(nlohmann::json::parse(run.config_json), action.changes);
    const std::string suffix = "-action" + std::to_string(number);
    experiment["name"] = run.name + suffix;
    std::string what;
    for (const profiler::Change& c : action.changes) what += (what.empty() ? "" : "; ") + changeText(c);
    experiment["description"] = "Run " + std::to_string(run.id.value) + " (" + run.name + ") with action " +
                                std::to_string(number) + ": " + action.title + " (" + what + ")";
    return experiment;
}

}  // namespace trainbench::app
