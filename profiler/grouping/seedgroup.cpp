#include "profiler/grouping/seedgroup.h"

#include <cctype>
#include <map>
#include <string_view>

#include "profiler/grouping/configkeys.h"

namespace trainbench::profiler {

namespace {

bool pending(const RunTta& r) { return r.row.status == RunStatus::Running && !r.tta.reached; }

// "fmnist-mlp-seed1", "fmnist-mlp-seed2" -> "fmnist-mlp": the shared prefix without a seed number
// (and a lone run's name without its "seed<N>" suffix) and trailing separators.
std::string sharedName(const std::vector<size_t>& members, const std::vector<RunTta>& runs) {
    std::string prefix = runs[members.front()].row.name;
    for (size_t i : members) {
        const std::string& n = runs[i].row.name;
        size_t k = 0;
        while (k < prefix.size() && k < n.size() && prefix[k] == n[k]) ++k;
        prefix.resize(k);
    }
    size_t end = prefix.size();
    while (end > 0 && std::isdigit(static_cast<unsigned char>(prefix[end - 1]))) --end;
    if (end >= 4 && prefix.compare(end - 4, 4, "seed") == 0) prefix.resize(end - 4);
    else if (members.size() > 1) prefix.resize(end);  // the seeds' differing digits
    else return prefix;
    while (!prefix.empty() && std::string_view("-_ =.#").find(prefix.back()) != std::string_view::npos) prefix.pop_back();
    return prefix.empty() ? runs[members.front()].row.name : prefix;
}

}  // namespace

std::vector<size_t> countedMembers(const SeedGroup& group, const std::vector<RunTta>& runs) {
    std::vector<size_t> out;
    for (size_t i : group.members)
        if (!pending(runs[i])) out.push_back(i);
    return out;
}

std::vector<SeedGroup> groupBySeed(const std::vector<RunTta>& runs) {
    std::vector<SeedGroup> groups;
    std::map<std::string, size_t> byKey;
    for (size_t i = 0; i < runs.size(); ++i) {
        std::string key = seedGroupKey(runs[i].row);
        if (key.empty()) key = "#" + std::to_string(runs[i].row.id.value);
        auto [it, inserted] = byKey.emplace(key, groups.size());
        if (inserted) groups.push_back(SeedGroup{key, {}, {}, 0, {}, false, std::nullopt, std::nullopt});
        groups[it->second].members.push_back(i);
    }
    std::map<std::string, size_t> scratchByKey;  // from-scratch key -> first group trained from scratch
    for (size_t g = 0; g < groups.size(); ++g) {
        SeedGroup& group = groups[g];
        group.label = sharedName(group.members, runs);
        std::vector<RunOutcome> own, total;
        for (size_t i : group.members) {
            const RunTta& r = runs[i];
            if (r.row.warm_start_run) group.warm_started = true;
            if (pending(r)) {
                ++group.pending;
                continue;
            }
            own.push_back({r.tta.seconds, r.tta.cost});
            // Reached but the pre-training unknown: the sum is unknown, not infinite; such a run
            // is left out of the total's statistic rather than counted as never reaching.
            if (!r.tta.reached) total.push_back({std::nullopt, std::nullopt});
            else if (const auto s = r.tta.secondsWithPretraining()) total.push_back({s, r.tta.costWithPretraining()});
        }
        group.time = groupStatistic(own);
        if (group.warm_started) group.with_pretraining = groupStatistic(total);
        else scratchByKey.emplace(fromScratchKey(runs[group.members.front()].row.config_json), g);
    }
    for (SeedGroup& group : groups) {
        if (!group.warm_started) continue;
        auto it = scratchByKey.find(fromScratchKey(runs[group.members.front()].row.config_json));
        if (it != scratchByKey.end()) group.from_scratch = it->second;
    }
    return groups;
}

}  // namespace trainbench::profiler
