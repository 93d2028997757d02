#include "app/loadtest/modelexamples.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainbench::app::loadtest {

ExampleSet modelTestExamples(const ModelSource& source, int64_t limit) {
    if (!source.run)
        throw std::invalid_argument(source.description + " holds no data: give the queries' examples with --examples FILE");
    const engine::EvalSet& test = source.run->data.test;
    if (test.count <= 0) throw std::invalid_argument(source.description + ": its data has no test examples to send");
    ExampleSet set;
    set.exampleSize = test.exampleSize();
    set.count = limit > 0 ? std::min(limit, test.count) : test.count;
    // Named by run, not by the store's or the checkpoint's path: the text is recorded in the store.
    set.source = "the test set of run " + std::to_string(source.run->id.value) + " (" + source.name + "): " + test.source;
    set.shape = {test.channels, test.height, test.width};
    // The pipeline scaled the stored values by the graph's input_scale; a client sends them as stored.
    const float scale = source.graph.metadata.input_scale;
    const size_t n = static_cast<size_t>(set.count * set.exampleSize);
    set.values.assign(test.x.begin(), test.x.begin() + static_cast<std::ptrdiff_t>(n));
    if (scale != 1.0f)
        for (float& v : set.values) v = std::nearbyint(v / scale);  // image bytes: whole numbers again
    return set;
}

}  // namespace trainbench::app::loadtest
