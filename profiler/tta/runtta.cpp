#include "profiler/tta/runtta.h"

#include <charconv>

#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"

namespace trainbench::profiler {

std::vector<RunTta> readTimeToAccuracy(RunStore& store, const std::vector<RunRow>& runs, TargetAccuracy target) {
    std::vector<RunTta> out;
    out.reserve(runs.size());
    for (const RunRow& row : runs) {
        RunTta r{row, timeToAccuracy(row, store.steps(row.id), store.evals(row.id), target), std::nullopt};
        r.tta.pretraining = pretrainingOf(store, row);
        for (const auto& [key, value] : store.attributes(row.id)) {
            if (key != runattr::kVirtualInfeedSecondsPerBatch) continue;
            double v = 0.0;
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
            if (ec == std::errc() && ptr == value.data() + value.size() && v >= 0) r.infeed_seconds = v;
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace trainbench::profiler
