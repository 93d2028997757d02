#include "app/run/aftertraining.h"

#include "app/run/parameterservertasks.h"
#include "engine/strategy/parameterserverstrategy.h"
#include "profiler/store/runattributes.h"

namespace trainbench::app {

namespace runattr = profiler::runattr;

void finishTraining(const RunRequest& request, engine::Strategy& strategy, const engine::TrainingData& data,
                    RunObservers& observers, RunRecord& record, RunProfiler* profile, int rank,
                    const engine::RunSummary& summary, RunOutcome& out, const Say& say) {
    const Experiment& x = request.experiment;
    profiler::RunWriter* writer = record.writer.get();
    // A streaming source read in full is counted by its first epoch, after the plan was stored.
    if (writer && data.train_examples == 0 && x.data.pipeline.shard_count == 1 && data.train->sourceExamples() > 0)
        writer->attributes({{runattr::kPlanTrainExamples, std::to_string(data.train->sourceExamples())}});
    if (observers.trace) out.outputError = writeTrace(*observers.trace, request, rank, say);
    if (profile) {
        profile->setEmulatedSteps(summary.steps);
        profile->finish(strategy, *writer, rank);
    }
    strategy.finish();
    if (auto* ps = dynamic_cast<engine::ParameterServerStrategy*>(&strategy); ps && writer)
        writer->attributes(parameterServerAttributes(ps->stats(), request.cluster->ps.size()));
}

}  // namespace trainbench::app
