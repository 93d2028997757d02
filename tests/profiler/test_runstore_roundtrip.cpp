// What a run writes is what a reader gets back: the runs row, every step and eval, the summary;
// plus the edits users make on saved runs (find, rename, delete) and the writer's usage errors.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <stdexcept>

#include "profiler/store/processidentity.h"
#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/storeerror.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::makeEval;
using testutil::makeStep;
using testutil::RawDb;
using testutil::TempDir;

void expectSameStep(const StepSample& a, const engine::StepRecord& b) {
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.epoch, b.epoch);
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_EQ(a.step_seconds, b.step_seconds);
    EXPECT_EQ(a.input_seconds, b.input_seconds);
    EXPECT_EQ(a.samples, b.samples);
    EXPECT_EQ(a.samples_per_second, b.samples_per_second);
    EXPECT_EQ(a.learning_rate, b.learning_rate);
    EXPECT_EQ(a.wall_seconds, b.wall_seconds);
    EXPECT_EQ(a.comm_seconds, b.comm_seconds);
    EXPECT_EQ(a.wait_seconds, b.wait_seconds);
}

void expectSameEval(const EvalSample& a, const engine::EvalRecord& b) {
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.epoch, b.epoch);
    EXPECT_EQ(a.split, b.split);
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_EQ(a.accuracy, b.accuracy);
    EXPECT_EQ(a.samples, b.samples);
    EXPECT_EQ(a.eval_seconds, b.eval_seconds);
    EXPECT_EQ(a.wall_seconds, b.wall_seconds);
}

RunSpec fullSpec() {
    RunSpec spec;
    spec.name = "mnist-mlp";
    spec.experiment_file = "experiments/mnist-mlp.json";
    spec.config_json = R"({"model":{"preset":"mlp"},"train":{"batch":64}})";
    spec.strategy = "mirrored";
    spec.devices = "cpu:2";
    spec.replicas = 2;
    spec.global_batch = 128;
    spec.threads = 4;
    spec.dataset = "mnist";
    spec.model = "mlp";
    spec.target_accuracy = 0.97;
    return spec;
}

engine::RunSummary fullSummary() {
    engine::RunSummary s;
    s.steps = 3;
    s.epochs_completed = 1;
    s.final_loss = 0.125;
    s.evaluations = 3;
    s.final_accuracy = 0.975;
    s.best_accuracy = 0.98;
    s.time_to_target = 12.5;
    s.step_at_target = 2;
    s.train_seconds = 30.25;
    s.eval_seconds = 1.5;
    s.throughput = 5120.5;
    s.stop_reason = engine::StopReason::TargetAccuracy;
    s.comm_seconds = 0.75;
    s.wait_seconds = 0.125;
    return s;
}

const std::regex kIsoUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

TEST(RunStoreRoundTrip, WrittenRunReadsBackEqual) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    std::vector<engine::StepRecord> steps = {makeStep(1), makeStep(2), makeStep(3)};
    std::vector<engine::EvalRecord> evals = {makeEval(2), makeEval(3, "train")};
    RunId id;
    {
        RunWriter writer(path, fullSpec());
        id = writer.runId();
        for (const auto& s : steps) writer.step(s);
        for (const auto& e : evals) writer.eval(e);
        writer.finish(RunStatus::Completed, fullSummary(), "reached target");
        EXPECT_TRUE(writer.finished());
    }

    RunStore store = RunStore::open(path);
    EXPECT_FALSE(store.readOnly());
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    const RunRow& row = runs[0];
    const RunSpec spec = fullSpec();
    const engine::RunSummary summary = fullSummary();
    const ProcessIdentity self = ProcessIdentity::current();
    EXPECT_EQ(row.id, id);
    EXPECT_EQ(row.name, spec.name);
    EXPECT_EQ(row.status, RunStatus::Completed);
    EXPECT_EQ(row.experiment_file, spec.experiment_file);
    EXPECT_EQ(row.config_json, spec.config_json);
    EXPECT_EQ(row.strategy, "mirrored");
    EXPECT_EQ(row.devices, "cpu:2");
    EXPECT_EQ(row.global_batch, 128);
    EXPECT_EQ(row.threads, 4);
    EXPECT_EQ(row.dataset, "mnist");
    EXPECT_EQ(row.model, "mlp");
    EXPECT_EQ(row.host, self.host);
    EXPECT_EQ(row.pid, self.pid);
    EXPECT_EQ(row.proc_start, self.proc_start);
    EXPECT_EQ(row.boot_id, self.boot_id);
    EXPECT_TRUE(std::regex_match(row.started_at, kIsoUtc)) << row.started_at;
    ASSERT_TRUE(row.ended_at.has_value());
    EXPECT_TRUE(std::regex_match(*row.ended_at, kIsoUtc)) << *row.ended_at;
    EXPECT_LE(row.started_at, *row.ended_at);
    EXPECT_EQ(row.message, "reached target");
    EXPECT_EQ(row.steps, summary.steps);
    EXPECT_EQ(row.epochs, summary.epochs_completed);
    EXPECT_EQ(row.final_loss, summary.final_loss);
    EXPECT_EQ(row.final_accuracy, summary.final_accuracy);
    EXPECT_EQ(row.best_accuracy, summary.best_accuracy);
    EXPECT_EQ(row.time_to_target, summary.time_to_target);
    EXPECT_EQ(row.step_at_target, summary.step_at_target);
    EXPECT_EQ(row.target_accuracy, 0.97);
    EXPECT_EQ(row.train_seconds, summary.train_seconds);
    EXPECT_EQ(row.eval_seconds, summary.eval_seconds);
    EXPECT_EQ(row.throughput, summary.throughput);
    EXPECT_EQ(row.stop_reason, "target_accuracy");
    EXPECT_EQ(row.replicas, 2);
    EXPECT_EQ(row.comm_seconds, 0.75);
    EXPECT_EQ(row.wait_seconds, 0.125);

    const auto readSteps = store.steps(id);
    ASSERT_EQ(readSteps.size(), steps.size());
    for (size_t i = 0; i < steps.size(); ++i) expectSameStep(readSteps[i], steps[i]);
    const auto replicas = store.replicaSteps(id);
    ASSERT_EQ(replicas.size(), 2 * steps.size());
    for (size_t i = 0; i < replicas.size(); ++i) {
        const engine::ReplicaStep& want = steps[i / 2].replicas[i % 2];
        EXPECT_EQ(replicas[i].step, steps[i / 2].step);
        EXPECT_EQ(replicas[i].replica.rank, want.rank);
        EXPECT_EQ(replicas[i].replica.samples, want.samples);
        EXPECT_EQ(replicas[i].replica.compute_seconds, want.compute_seconds);
        EXPECT_EQ(replicas[i].replica.comm_seconds, want.comm_seconds);
        EXPECT_EQ(replicas[i].replica.wait_seconds, want.wait_seconds);
    }
    const auto readEvals = store.evals(id);
    ASSERT_EQ(readEvals.size(), evals.size());
    for (size_t i = 0; i < evals.size(); ++i) expectSameEval(readEvals[i], evals[i]);

    EXPECT_EQ(store.findRun(std::to_string(id.value)), row);
    EXPECT_EQ(store.run(id), row);
    EXPECT_EQ(store.steps(id, 2).size(), 1u);
}

TEST(RunStoreRoundTrip, UnreachedTargetAndMissingOptionalsStayNull) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunSpec spec;  // defaults only, no name
    engine::RunSummary summary;
    summary.steps = 1;
    summary.stop_reason = engine::StopReason::MaxSteps;
    RunId id;
    {
        RunWriter writer(path, spec);
        id = writer.runId();
        writer.step(makeStep(1));
        writer.finish(RunStatus::Completed, summary);
    }
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    const auto row = store.run(id);
    ASSERT_TRUE(row);
    EXPECT_EQ(row->name, "run-" + std::to_string(id.value));
    EXPECT_EQ(row->strategy, "single");
    EXPECT_EQ(row->devices, "cpu:1");
    EXPECT_FALSE(row->experiment_file);
    EXPECT_FALSE(row->global_batch);
    EXPECT_FALSE(row->dataset);
    EXPECT_FALSE(row->target_accuracy);
    EXPECT_FALSE(row->time_to_target);
    EXPECT_FALSE(row->step_at_target);
    EXPECT_FALSE(row->message);
    EXPECT_EQ(row->config_json, "{}");
}

TEST(RunStoreRoundTrip, NanLossIsStoredAsNullAndReadBackAsNan) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunWriter writer(path, RunSpec{});
    engine::StepRecord diverged = makeStep(1);
    diverged.loss = std::nan("");
    writer.step(diverged);
    writer.flush();
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    const auto steps = store.steps(writer.runId());
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_TRUE(std::isnan(steps[0].loss));
    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM steps WHERE loss IS NULL"), 1);
    writer.finish(RunStatus::Failed, engine::RunSummary{}, "loss diverged");
}

// A run that fails has no summary of its own (the trainer never returned one), yet its steps
// column says how far it got, as the schema promises.
TEST(RunStoreRoundTrip, AFailedRunWithoutSummaryRecordsItsLastStep) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunWriter writer(path, RunSpec{});
    for (int64_t s = 1; s <= 3; ++s) writer.step(makeStep(s));
    writer.finish(RunStatus::Failed, engine::RunSummary{}, "checkpoint not saved");
    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    EXPECT_EQ(store.run(writer.runId())->steps, 3);
}

TEST(RunStoreRoundTrip, ManyStepsAreCommittedInFewBatches) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    constexpr int64_t kSteps = 20000;
    RunWriter writer(path, RunSpec{});
    for (int64_t s = 1; s <= kSteps; ++s) {
        writer.step(makeStep(s));
        if (s % 100 == 0) writer.eval(makeEval(s));
    }
    engine::RunSummary summary;
    summary.steps = kSteps;
    writer.finish(RunStatus::Completed, summary);
    // Whole batches, not a transaction per step.
    EXPECT_GE(writer.committedBatches(), 1u);
    EXPECT_LT(writer.committedBatches(), static_cast<size_t>(kSteps / 100));

    RunStore store = RunStore::open(path, OpenMode::ReadOnly);
    const auto steps = store.steps(writer.runId());
    ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps));
    for (int64_t s = 1; s <= kSteps; ++s) ASSERT_EQ(steps[static_cast<size_t>(s - 1)].step, s);
    EXPECT_EQ(store.evals(writer.runId()).size(), static_cast<size_t>(kSteps / 100));
}

TEST(RunStoreRoundTrip, FlushMakesStepsVisibleToOtherConnections) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunWriterOptions slow;
    slow.commitInterval = std::chrono::hours(1);  // only flush() can commit
    RunWriter writer(path, RunSpec{}, slow);
    RunStore reader = RunStore::open(path, OpenMode::ReadOnly);
    ASSERT_EQ(reader.listRuns().size(), 1u);  // the runs row is there before any step
    EXPECT_EQ(reader.listRuns()[0].status, RunStatus::Running);
    for (int64_t s = 1; s <= 10; ++s) writer.step(makeStep(s));
    EXPECT_TRUE(reader.steps(writer.runId()).empty());
    writer.flush();
    EXPECT_EQ(reader.steps(writer.runId()).size(), 10u);
    writer.finish(RunStatus::Stopped, engine::RunSummary{}, "stopped by user");
    EXPECT_EQ(reader.run(writer.runId())->status, RunStatus::Stopped);
}

TEST(RunStoreEdits, FindRunByIdOrNewestName) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    auto record = [&](const std::string& name) {
        RunSpec spec;
        spec.name = name;
        RunWriter writer(path, spec);
        writer.finish(RunStatus::Completed, engine::RunSummary{});
        return writer.runId();
    };
    const RunId first = record("baseline");
    const RunId second = record("baseline");
    const RunId numeric = record("2024");

    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.findRun("baseline")->id, second);
    EXPECT_EQ(store.findRun(std::to_string(first.value))->id, first);
    EXPECT_EQ(store.findRun("2024")->id, numeric);  // no run has id 2024: falls back to the name
    EXPECT_FALSE(store.findRun("nope"));
    EXPECT_FALSE(store.findRun("999"));

    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].id, numeric);  // newest first
    EXPECT_EQ(runs[2].id, first);
}

TEST(RunStoreEdits, RenameAndDeleteWithCascade) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunId keep, drop;
    for (RunId* id : {&keep, &drop}) {
        RunWriter writer(path, RunSpec{});
        *id = writer.runId();
        for (int64_t s = 1; s <= 5; ++s) writer.step(makeStep(s));
        writer.eval(makeEval(5));
        writer.finish(RunStatus::Completed, engine::RunSummary{});
    }
    RunStore store = RunStore::open(path);
    EXPECT_TRUE(store.renameRun(keep, "kept"));
    EXPECT_EQ(store.run(keep)->name, "kept");
    EXPECT_FALSE(store.renameRun(RunId{12345}, "ghost"));
    EXPECT_THROW(store.renameRun(keep, ""), std::invalid_argument);

    EXPECT_TRUE(store.deleteRun(drop));
    EXPECT_FALSE(store.deleteRun(drop));
    EXPECT_FALSE(store.run(drop));
    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM steps WHERE run_id = " + std::to_string(drop.value)), 0);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM evals WHERE run_id = " + std::to_string(drop.value)), 0);
    EXPECT_EQ(store.steps(keep).size(), 5u);
    EXPECT_EQ(store.evals(keep).size(), 1u);

    // Ids are never handed out again, so "run N" keeps naming the same run.
    RunWriter next(path, RunSpec{});
    EXPECT_GT(next.runId().value, drop.value);
    EXPECT_THROW(store.deleteRun(next.runId()), StoreError);  // still running
    next.finish(RunStatus::Completed, engine::RunSummary{});
    EXPECT_TRUE(store.deleteRun(next.runId()));
}

TEST(RunWriterUsage, DestroyedWithoutFinishMarksRunFailedAndKeepsSteps) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunId id;
    {
        RunWriter writer(path, RunSpec{});
        id = writer.runId();
        for (int64_t s = 1; s <= 7; ++s) writer.step(makeStep(s));
    }
    RunStore store = RunStore::open(path);
    const auto row = store.run(id);
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, RunStatus::Failed);
    ASSERT_TRUE(row->message);
    EXPECT_NE(row->message->find("without a final status"), std::string::npos) << *row->message;
    EXPECT_EQ(row->steps, 7);
    EXPECT_TRUE(row->ended_at);
    EXPECT_EQ(store.steps(id).size(), 7u);
}

TEST(RunWriterUsage, MisuseIsReportedAtTheCall) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunSpec bad;
    bad.config_json = "{not json";
    EXPECT_THROW(RunWriter(path, bad, RunWriterOptions{}), std::invalid_argument);

    RunWriter writer(path, RunSpec{});
    writer.step(makeStep(1));
    writer.step(makeStep(2));
    EXPECT_THROW(writer.step(makeStep(2)), std::invalid_argument);
    EXPECT_THROW(writer.finish(RunStatus::Running, engine::RunSummary{}), std::invalid_argument);
    writer.finish(RunStatus::Completed, engine::RunSummary{});
    EXPECT_THROW(writer.step(makeStep(3)), std::logic_error);
    EXPECT_THROW(writer.eval(makeEval(3)), std::logic_error);
    EXPECT_THROW(writer.finish(RunStatus::Completed, engine::RunSummary{}), std::logic_error);
    writer.flush();  // nothing left to do, no error

    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.steps(writer.runId()).size(), 2u);
}

}  // namespace
}  // namespace trainbench::profiler
