#include "app/run/checkpointmetadata.h"

#include <nlohmann/json.hpp>

#include "engine/util/errors.h"
#include "engine/util/jsonlimits.h"

namespace trainbench::app {

namespace {

nlohmann::json metadataOf(const engine::Checkpoint& c) {
    // Metadata is a few hundred bytes of flat JSON; a file from elsewhere gets the limits of an
    // experiment file before it is parsed.
    if (const auto v = engine::checkJsonLimits(c.metadata(), {1u << 20, 32}))
        throw engine::CheckpointError(c.path() + ": checkpoint metadata: " + v->message + " (" +
                                      engine::describeByteOffset(c.metadata(), v->offset) + ")");
    try {
        return nlohmann::json::parse(c.metadata());
    } catch (const nlohmann::json::exception& e) {
        throw engine::CheckpointError(c.path() + ": checkpoint metadata is not JSON: " + e.what());
    }
}

}  // namespace

// A checkpoint's metadata: the run it belongs to and where training stood (TrainProgress).
std::string progressMetadata(const engine::TrainProgress& p, int64_t runId, int64_t optimizerStepsBefore) {
    const engine::RunSummary& s = p.summary;
    nlohmann::json j = {
        {"run_id", runId}, {"step", p.step}, {"epoch", p.epoch}, {"batch_in_epoch", p.batch_in_epoch},
        {"evaluated_at_step", p.evaluated_at_step}, {"epochs_completed", s.epochs_completed},
        {"final_loss", s.final_loss}, {"evaluations", s.evaluations}, {"final_accuracy", s.final_accuracy},
        {"best_accuracy", s.best_accuracy}, {"train_seconds", s.train_seconds}, {"eval_seconds", s.eval_seconds},
        {"input_seconds", s.input_seconds}, {"comm_seconds", s.comm_seconds}, {"wait_seconds", s.wait_seconds},
        {"skipped_records", s.skipped_records}};
    if (s.time_to_target) j["time_to_target"] = *s.time_to_target;
    if (s.step_at_target) j["step_at_target"] = *s.step_at_target;
    if (optimizerStepsBefore != 0) j["optimizer_steps_before"] = optimizerStepsBefore;
    return j.dump();
}

int64_t runIdFromMetadata(const engine::Checkpoint& c) {
    const nlohmann::json j = metadataOf(c);
    if (!j.contains("run_id") || !j["run_id"].is_number_integer())
        throw engine::CheckpointError(c.path() + ": checkpoint metadata has no run_id");
    return j["run_id"].get<int64_t>();
}

engine::TrainProgress progressFromMetadata(const engine::Checkpoint& c) {
    const nlohmann::json j = metadataOf(c);
    engine::TrainProgress p;
    try {
        p.step = j.at("step").get<int64_t>();
        p.epoch = j.at("epoch").get<int64_t>();
        p.batch_in_epoch = j.at("batch_in_epoch").get<int64_t>();
        p.evaluated_at_step = j.at("evaluated_at_step").get<bool>();
        engine::RunSummary& s = p.summary;
        s.steps = p.step;
        s.epochs_completed = j.at("epochs_completed").get<int64_t>();
        s.final_loss = j.at("final_loss").get<double>();
        s.evaluations = j.at("evaluations").get<int64_t>();
        s.final_accuracy = j.at("final_accuracy").get<double>();
        s.best_accuracy = j.at("best_accuracy").get<double>();
        s.train_seconds = j.at("train_seconds").get<double>();
        s.eval_seconds = j.at("eval_seconds").get<double>();
        s.input_seconds = j.at("input_seconds").get<double>();
        s.comm_seconds = j.at("comm_seconds").get<double>();
        s.wait_seconds = j.at("wait_seconds").get<double>();
        s.skipped_records = j.at("skipped_records").get<int64_t>();
        if (j.contains("time_to_target")) s.time_to_target = j["time_to_target"].get<double>();
        if (j.contains("step_at_target")) s.step_at_target = j["step_at_target"].get<int64_t>();
    } catch (const nlohmann::json::exception& e) {
        throw engine::CheckpointError(c.path() + ": checkpoint metadata: " + e.what());
    }
    return p;
}

int64_t optimizerStepsBeforeFromMetadata(const engine::Checkpoint& c) {
    const nlohmann::json j = metadataOf(c);
    if (!j.contains("optimizer_steps_before")) return 0;
    if (!j["optimizer_steps_before"].is_number_integer())
        throw engine::CheckpointError(c.path() + ": checkpoint metadata: optimizer_steps_before is not an integer");
    return j["optimizer_steps_before"].get<int64_t>();
}

}  // namespace trainbench::app
