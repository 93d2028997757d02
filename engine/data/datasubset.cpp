#include "engine/data/datasubset.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "engine/util/rng.h"

namespace trainbench::engine {

int64_t subsetSize(int64_t n, double fraction) {
    if (!(fraction > 0.0 && fraction <= 1.0))
        throw std::invalid_argument("data.fraction must be in (0, 1], got " + std::to_string(fraction));
    if (fraction == 1.0) return n;
    return std::min(n, static_cast<int64_t>(std::floor(fraction * static_cast<double>(n) + 0.5)));
}

std::vector<int64_t> subsetOrder(const std::vector<int32_t>& labels, uint64_t subsetSeed) {
    // Classes in label order (unknown first), each shuffled with its own stream of the subset seed,
    // so that a class's order does not depend on how many examples the others have.
    std::map<int32_t, std::vector<int64_t>> byClass;
    for (size_t i = 0; i < labels.size(); ++i) byClass[std::max(labels[i], int32_t{-1})].push_back(static_cast<int64_t>(i));
    struct Slot {
        double due;       // (j + 0.5) / n_c: where class c's j-th example falls due in the order
        uint64_t tie;     // classes falling due together (equal sizes) come in a random order
        int64_t example;
    };
    std::vector<Slot> slots;
    slots.reserve(labels.size());
    for (auto& [label, members] : byClass) {
        Rng rng(deriveSeed(subsetSeed, kSeedSubset, static_cast<uint64_t>(static_cast<int64_t>(label) + 1)));
        for (size_t i = members.size(); i > 1; --i) std::swap(members[i - 1], members[rng.below(i)]);
        const double n = static_cast<double>(members.size());
        for (size_t j = 0; j < members.size(); ++j)
            slots.push_back({(static_cast<double>(j) + 0.5) / n, rng.next(), members[j]});
    }
    std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) {
        if (a.due != b.due) return a.due < b.due;
        if (a.tie != b.tie) return a.tie < b.tie;
        return a.example < b.example;
    });
    std::vector<int64_t> order;
    order.reserve(slots.size());
    for (const Slot& s : slots) order.push_back(s.example);
    return order;
}

std::vector<int64_t> subsetIndices(const std::vector<int32_t>& labels, double fraction, uint64_t subsetSeed) {
    const int64_t keep = subsetSize(static_cast<int64_t>(labels.size()), fraction);
    std::vector<int64_t> order = subsetOrder(labels, subsetSeed);
    order.resize(static_cast<size_t>(keep));
    std::sort(order.begin(), order.end());
    return order;
}

}  // namespace trainbench::engine
