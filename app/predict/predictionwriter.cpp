#include "app/predict/predictionwriter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "engine/data/records/example.h"
#include "engine/data/records/tfrecord.h"
#include "engine/io/atomicfilewriter.h"
#include "profiler/format/csvfield.h"

namespace trainbench::app {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void appendNumber(std::string& out, float v) {
    char buf[32];
    // Shortest text that reads back as the same float.
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

void appendInteger(std::string& out, int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

class CsvPredictionWriter : public PredictionWriter {
public:
    CsvPredictionWriter(const std::string& path, int64_t classes, std::vector<std::string> names)
        : file_(path, {.what = "predictions CSV"}), classes_(classes), names_(std::move(names)), scores_(classes) {
        std::string& b = file_.buffer();
        b += names_.empty() ? "index,prediction,score,label" : "index,prediction,prediction_name,score,label";
        for (int64_t c = 0; c < classes_; ++c) {
            // Class names are user text: quoted like any CSV field that may hold a comma or quote.
            b += ',';
            b += profiler::csvField("p_" + (names_.empty() ? std::to_string(c) : names_[static_cast<size_t>(c)]));
        }
        b += '\n';
    }
    void write(int64_t first, const float* logits, int64_t n, const int32_t* labels) override {
        std::string& b = file_.buffer();
        for (int64_t i = 0; i < n; ++i) {
            const int64_t top = softmaxRow(logits + i * classes_, classes_, scores_.data());
            appendInteger(b, first + i);
            b += ',';
            appendInteger(b, top);
            if (!names_.empty()) {
                b += ',';
                b += profiler::csvField(names_[static_cast<size_t>(top)]);
            }
            b += ',';
            appendNumber(b, scores_[static_cast<size_t>(top)]);
            b += ',';
            appendInteger(b, labels[i]);
            for (float p : scores_) {
                b += ',';
                appendNumber(b, p);
            }
            b += '\n';
        }
        file_.flushIfFull();
    }
    void close() override { file_.commit(); }
    uint64_t bytesWritten() const override { return file_.bytesWritten(); }

private:
    engine::AtomicFileWriter file_;
    int64_t classes_;
    std::vector<std::string> names_;
    std::vector<float> scores_;
};

class TFRecordPredictionWriter : public PredictionWriter {
public:
    TFRecordPredictionWriter(const std::string& path, int64_t classes) : file_(path), classes_(classes), scores_(classes) {}
    void write(int64_t first, const float* logits, int64_t n, const int32_t* labels) override {
        for (int64_t i = 0; i < n; ++i) {
            const int64_t top = softmaxRow(logits + i * classes_, classes_, scores_.data());
            file_.write(engine::encodePrediction(first + i, top, scores_.data(), scores_.size(), labels[i]));
        }
    }
    void close() override { file_.close(); }
    uint64_t bytesWritten() const override { return file_.bytesWritten(); }

private:
    engine::TFRecordWriter file_;
    int64_t classes_;
    std::vector<float> scores_;
};

}  // namespace

int64_t softmaxRow(const float* logits, int64_t classes, float* probabilities) {
    const float* top = std::max_element(logits, logits + classes);
    double sum = 0.0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(logits[c] - *top));
    for (int64_t c = 0; c < classes; ++c)
        probabilities[c] = static_cast<float>(std::exp(static_cast<double>(logits[c] - *top)) / sum);
    return top - logits;
}

std::unique_ptr<PredictionWriter> openPredictionWriter(const std::string& path, int64_t classes,
                                                       const std::vector<std::string>& classNames) {
    if (endsWith(path, ".csv")) return std::make_unique<CsvPredictionWriter>(path, classes, classNames);
    if (endsWith(path, ".tfrecord")) return std::make_unique<TFRecordPredictionWriter>(path, classes);
    throw std::invalid_argument("--out " + path + ": say where predictions go as FILE.csv or FILE.tfrecord");
}

}  // namespace trainbench::app
