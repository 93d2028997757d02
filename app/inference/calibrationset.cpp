#include "app/inference/calibrationset.h"

#include <numeric>
#include <stdexcept>
#include <string>

#include "engine/data/imagedataset.h"
#include "engine/util/rng.h"

namespace trainbench::app {

std::vector<float> calibrationExamples(const ModelSource& source, int64_t count, uint64_t seed) {
    const engine::ImageDataset* train = requireRun(source, "calibration").data.trainIdx.get();
    if (!train)
        throw std::invalid_argument(source.description + ": calibration reads the training set in memory (IDX); "
                                    "this run's data streams");
    if (count > train->count)
        throw std::invalid_argument(source.description + ": calibration asks for " + std::to_string(count) +
                                    " examples; the training set holds " + std::to_string(train->count));
    // A partial Fisher-Yates shuffle: the first count positions are the draw.
    std::vector<int64_t> order(static_cast<size_t>(train->count));
    std::iota(order.begin(), order.end(), int64_t{0});
    engine::Rng rng(seed);
    for (int64_t i = 0; i < count; ++i) {
        const int64_t j = i + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(train->count - i));
        std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
    }
    const size_t per = static_cast<size_t>(train->exampleSize());
    std::vector<float> x(static_cast<size_t>(count) * per);
    for (int64_t i = 0; i < count; ++i) {
        const uint8_t* from = train->pixels.data() + static_cast<size_t>(order[static_cast<size_t>(i)]) * per;
        std::copy(from, from + per, x.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(i) * per));
    }
    return x;
}

}  // namespace trainbench::app
