#pragma once
// Where a prediction run's answers go, chosen by the output's extension: ".csv" (a header, then per
// example its index, the predicted class, its name when the model has class names, the top
// probability, the label, and one probability per class) or ".tfrecord" (one tf.train.Example per
// prediction: engine/data/records/example.h, encodePrediction). Written whole or not at all (the
// engine's atomic writers): a run that fails or is stopped leaves no partial file under the name.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trainbench::app {

class PredictionWriter {
public:
    virtual ~PredictionWriter() = default;
    // n examples: their logits ([n, classes] row-major) and labels, the first being example `first`.
    virtual void write(int64_t first, const float* logits, int64_t n, const int32_t* labels) = 0;
    // Puts the file in place; FileWriteError naming it (disk full, ...).
    virtual void close() = 0;
    virtual uint64_t bytesWritten() const = 0;
};

// std::invalid_argument naming the path for an extension that is neither .csv nor .tfrecord.
std::unique_ptr<PredictionWriter> openPredictionWriter(const std::string& path, int64_t classes,
                                                       const std::vector<std::string>& classNames);

// Softmax of one row of logits into `probabilities` (size classes); returns the top class.
int64_t softmaxRow(const float* logits, int64_t classes, float* probabilities);

}  // namespace trainbench::app
