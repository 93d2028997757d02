#include "engine/train/traininput.h"

#include <utility>

#include "engine/instrument/instrument.h"

namespace trainbench::engine {

TrainInput::TrainInput(InputPipeline& train, int64_t skipBatches)
    : train_(train), skipBatches_(skipBatches), before_(train.stats()) {}

int64_t TrainInput::startEpoch(int64_t epoch) {
    train_.startEpoch(epoch);
    // Resuming: the batches of this epoch trained before the checkpoint come again in the same order
    // (same seed); skip them.
    int64_t skipped = 0;
    for (; skipBatches_ > 0; --skipBatches_, ++skipped)
        if (train_.next().count == 0) break;
    skipBatches_ = 0;
    return skipped;
}

BatchView TrainInput::next() {
    TB_PHASE(Input);
    return train_.next();
}

void TrainInput::recordStages(StepRecord& rec) {
    PipelineStats now = train_.stats();
    rec.input_stages.reserve(now.stages.size());
    for (size_t i = 0; i < now.stages.size() && i < before_.stages.size(); ++i) {
        const StageStats &a = before_.stages[i], &b = now.stages[i];
        InputStageStep d;
        d.stage = b.name;
        d.seconds = b.seconds - a.seconds;
        d.items = b.items - a.items;
        d.bytes = b.bytes - a.bytes;
        const int64_t samples = b.fill_samples - a.fill_samples;
        if (samples > 0) d.fill = (b.fill_sum - a.fill_sum) / static_cast<double>(samples);
        rec.input_stages.push_back(std::move(d));
    }
    before_ = std::move(now);
}

}  // namespace trainbench::engine
