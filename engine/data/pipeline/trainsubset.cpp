#include "engine/data/pipeline/trainsubset.h"

#include <algorithm>
#include <cstring>

#include "engine/data/datasubset.h"

namespace trainbench::engine {

void keepSubset(ImageDataset& ds, double fraction, uint64_t subsetSeed) {
    if (fraction >= 1.0) return;
    const std::vector<int64_t> kept = subsetIndices(ds.labels, fraction, subsetSeed);
    const auto size = static_cast<size_t>(ds.exampleSize());
    // Ascending indices: row k moves to k' <= k, so the rows can be compacted in place.
    for (size_t k = 0; k < kept.size(); ++k) {
        const auto from = static_cast<size_t>(kept[k]);
        if (from != k) std::memmove(ds.pixels.data() + k * size, ds.pixels.data() + from * size, size);
        ds.labels[k] = ds.labels[from];
    }
    ds.count = static_cast<int64_t>(kept.size());
    ds.pixels.resize(kept.size() * size);
    ds.pixels.shrink_to_fit();
    ds.labels.resize(kept.size());
}

SourceFiles keepSubset(SourceFiles all, const std::vector<std::vector<int32_t>>& labelsByFile, double fraction,
                       uint64_t subsetSeed) {
    std::vector<int32_t> labels;
    for (const auto& file : labelsByFile) labels.insert(labels.end(), file.begin(), file.end());
    const std::vector<int64_t> kept = subsetIndices(labels, fraction, subsetSeed);
    SourceFiles out;
    out.format = all.format;
    out.description = all.description;
    out.examples = static_cast<int64_t>(kept.size());
    size_t next = 0;  // into kept
    int64_t first = 0;  // the global index of this file's first record
    for (size_t f = 0; f < labelsByFile.size() && f < all.files.size(); ++f) {
        const auto n = static_cast<int64_t>(labelsByFile[f].size());
        std::vector<bool> keep(static_cast<size_t>(n), false);
        int64_t count = 0;
        for (; next < kept.size() && kept[next] < first + n; ++next, ++count) keep[static_cast<size_t>(kept[next] - first)] = true;
        first += n;
        if (count == 0) continue;
        out.files.push_back(std::move(all.files[f]));
        if (!all.labels.empty()) out.labels.push_back(all.labels[f]);
        // A file read whole needs no list.
        out.keep.push_back(count == n ? std::vector<bool>() : std::move(keep));
    }
    return out;
}

}  // namespace trainbench::engine
