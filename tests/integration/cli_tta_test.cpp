// End to end: `trainbench-cli tta` reads a real store and prints time- and cost-to-accuracy for any
// target, per run and per seed group; on a real run it agrees with the trainer's own figure.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/profiler/ttatestutil.h"

using namespace trainbench;
using nlohmann::json;
using profiler::testutil::HandRun;
using profiler::testutil::writeRun;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

// One step of `seconds` per run, evaluated after it at `accuracy`; 1 device at $36/h ($0.01 a second).
HandRun seedRun(const std::string& name, int seed, double seconds, double accuracy, bool priced = true) {
    HandRun h;
    h.name = name + "-seed" + std::to_string(seed);
    h.config = R"({"name":")" + h.name + R"(","seed":)" + std::to_string(seed) + R"(,"model":{"preset":")" + name + "\"}}";
    h.stepSeconds = {seconds};
    h.evals = {{1, accuracy}};
    if (priced) h.pricePerDeviceHour = 36.0;
    return h;
}

const json* groupNamed(const json& out, const std::string& label) {
    for (const json& g : out["groups"])
        if (g["label"] == label) return &g;
    return nullptr;
}

}  // namespace

TEST(CliTta, AgreesWithTheTrainersTimeToTargetOfARealRun) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    std::ofstream(tmp.path / "w1.json") << R"({"name": "w1", "model": {"preset": "mlp"},
      "data": {"train_limit": 2048, "test_limit": 500},
      "train": {"batch_size": 128, "epochs": 0, "max_steps": 12, "eval_every_steps": 4, "threads": 2, "target_accuracy": 0.5}})";
    auto run = runCli({"run", (tmp.path / "w1.json").string(), "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("w1");
    ASSERT_TRUE(row && row->time_to_target) << "W1 reaches 50 % within 12 steps";

    auto r = runCli({"tta", "--target", "0.5", "--db", db, "--json"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json out = json::parse(r.out);
    const json& w1 = out["runs"][0];
    EXPECT_EQ(w1["step"], *row->step_at_target);
    EXPECT_NEAR(w1["seconds"].get<double>(), *row->time_to_target, 1e-9);
    ASSERT_TRUE(row->costPerSecond().has_value()) << "a cpu run is charged as this host";
    EXPECT_NEAR(w1["cost"].get<double>(), *row->time_to_target * *row->costPerSecond(), 1e-12);

    // Any other target: the first evaluation at or above it, read back with `export --series evals`.
    const auto evals = store.evals(row->id);
    const double best = *row->best_accuracy;
    int64_t stepAtBest = 0;
    for (const auto& e : evals)
        if (e.accuracy >= best) {
            stepAtBest = e.step;
            break;
        }
    auto atBest = runCli({"tta", "--target", std::to_string(best), "--db", db, "--json"}, tmp.path);
    ASSERT_EQ(atBest.exitCode, 0) << atBest.err;
    EXPECT_EQ(json::parse(atBest.out)["runs"][0]["step"], stepAtBest);
    auto text = runCli({"tta", "--target", "99%", "--db", db}, tmp.path);
    EXPECT_NE(text.out.find("not reached"), std::string::npos) << text.out;
}

TEST(CliTta, SeedGroupsDropTheFastestAndSlowestOfFiveAndShowUnknownCosts) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    // mlp: 5 seeds, one short of 85 %: (40 + 50 + 70) / 3 s after dropping 30 s and the unreached.
    const double mlp[] = {50, 30, 90, 40, 70};
    for (int seed = 0; seed < 5; ++seed) writeRun(db, seedRun("mlp", seed, mlp[seed], seed == 2 ? 0.8 : 0.9));
    // cnn: no price recorded; logreg: never evaluated.
    writeRun(db, seedRun("cnn", 1, 10, 0.9, /*priced=*/false));
    HandRun logreg = seedRun("logreg", 1, 5, 0.9);
    logreg.evals.clear();
    writeRun(db, logreg);

    auto r = runCli({"tta", "--target", "0.85", "--db", db, "--group-seeds", "--json"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json out = json::parse(r.out);
    const json* g = groupNamed(out, "mlp");
    ASSERT_NE(g, nullptr) << out.dump(2);
    EXPECT_EQ((*g)["runs"].size(), 5u);
    EXPECT_EQ((*g)["time"]["reached"], 4);
    EXPECT_EQ((*g)["time"]["dropped"], 2);
    EXPECT_NEAR((*g)["time"]["seconds"].get<double>(), 160.0 / 3.0, 1e-9);
    EXPECT_NEAR((*g)["time"]["cost"].get<double>(), 1.6 / 3.0, 1e-12);
    const json* cnn = groupNamed(out, "cnn");
    ASSERT_NE(cnn, nullptr);
    EXPECT_DOUBLE_EQ((*cnn)["time"]["seconds"].get<double>(), 10.0);
    EXPECT_TRUE((*cnn)["time"]["cost"].is_null()) << "no price: unknown, never 0";
    const json* lr = groupNamed(out, "logreg");
    ASSERT_NE(lr, nullptr);
    EXPECT_TRUE((*lr)["time"]["seconds"].is_null());

    auto text = runCli({"tta", "--target", "0.85", "--db", db, "--group-seeds"}, tmp.path);
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("53.3 s"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("5 (2 dropped)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("unknown"), std::string::npos) << "the cnn's cost\n" << text.out;
    // Per run, filtered by name: the cnn's cost is unknown, not $0.
    auto one = runCli({"tta", "--target", "0.85", "--db", db, "--name", "cnn"}, tmp.path);
    EXPECT_NE(one.out.find("unknown"), std::string::npos) << one.out;
    EXPECT_EQ(one.out.find("$0"), std::string::npos) << one.out;
    EXPECT_EQ(one.out.find("mlp-seed"), std::string::npos) << one.out;
}

TEST(CliTta, AWarmStartedRunIsShownWithAndWithoutItsPretraining) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    HandRun source = seedRun("mlp", 1, 1.0, 0.7);
    source.stepSeconds.assign(10, 1.0);  // 10 s at $0.01/s
    source.evals = {{10, 0.7}};
    const auto sourceId = writeRun(db, source);
    HandRun warm = seedRun("warm", 1, 2.0, 0.9);  // 2 s of its own after the source's step 4
    warm.warmStartRun = sourceId.value;
    warm.warmStartStep = "4";
    writeRun(db, warm);
    auto r = runCli({"tta", "--target", "0.85", "--db", db, "--json"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json out = json::parse(r.out);
    const json& w = out["runs"][0];  // newest first
    EXPECT_EQ(w["name"], "warm-seed1");
    EXPECT_DOUBLE_EQ(w["seconds"].get<double>(), 2.0);
    EXPECT_EQ(w["warm_start"]["source"], sourceId.value);
    EXPECT_EQ(w["warm_start"]["step"], 4);
    EXPECT_DOUBLE_EQ(w["warm_start"]["seconds_with_pretraining"].get<double>(), 6.0);
    EXPECT_NEAR(w["warm_start"]["cost_with_pretraining"].get<double>(), 0.06, 1e-12);
    auto text = runCli({"tta", "--target", "0.85", "--db", db}, tmp.path);
    EXPECT_NE(text.out.find("run 1 @ step 4"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("6.0 s / $0.06"), std::string::npos) << text.out;
}

TEST(CliTta, ABadTargetOrStatusIsAUsageError) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    writeRun(db, seedRun("mlp", 1, 1.0, 0.9));
    for (const char* bad : {"0", "1.5", "-0.2", "abc", "150%"}) {
        auto r = runCli({"tta", "--target", bad, "--db", db}, tmp.path);
        EXPECT_EQ(r.exitCode, 2) << bad;
        EXPECT_NE(r.err.find("--target"), std::string::npos) << r.err;
    }
    auto r = runCli({"tta", "--target", "1.5", "--db", db}, tmp.path);
    EXPECT_NE(r.err.find("1.5 is outside (0, 1]"), std::string::npos) << r.err;
    auto status = runCli({"tta", "--target", "0.5", "--status", "done", "--db", db}, tmp.path);
    EXPECT_EQ(status.exitCode, 2);
    EXPECT_NE(status.err.find("unknown status 'done'"), std::string::npos) << status.err;
    auto missing = runCli({"tta", "--db", db}, tmp.path);
    EXPECT_EQ(missing.exitCode, 2) << "--target is required";
}
