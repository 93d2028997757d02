// End to end: `trainbench-cli plan` ranks the configurations of a real store by time and cost to a
// target against a deadline and a budget, and projects the points of a sweep that have no runs
// from a run with the same numerics and the estimator's step time.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"
#include "tests/profiler/ttatestutil.h"

using namespace trainbench;
using nlohmann::json;
using profiler::testutil::configRun;
using profiler::testutil::HandRun;
using profiler::testutil::writeRun;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

const json& rowNamed(const json& plan, const std::string& label) {
    for (const json& r : plan["rows"])
        if (r["label"] == label) return r;
    static const json none;
    ADD_FAILURE() << "no row " << label << " in " << plan.dump(2);
    return none;
}

}  // namespace

// fast:   emulated, 100 s at $360/h   -> $10: in time, over budget
// mid:    measured, 5 seeds of 200 s ... 600 s at $36/h; mean of the middle three 400 s -> $4: both
// cheap:  measured, 3 h at $0.36/h    -> $1.08: too slow, within budget
// free:   measured, 150 s, no price    -> cost unknown: in time, budget unknown
// never:  best 70 %                    -> last, with why
TEST(CliPlan, RanksMarksAndNamesTheFastestWithinBudgetAndTheCheapestWithinDeadline) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    writeRun(db, configRun("fast", 1, 10, 10.0, 0.9, 360.0, "virtual"));
    const double mid[] = {400, 200, 600, 300, 500};
    for (int seed = 0; seed < 5; ++seed) writeRun(db, configRun("mid", seed, 1, mid[seed], 0.9, 36.0));
    writeRun(db, configRun("cheap", 1, 3, 3600.0, 0.9, 0.36));
    writeRun(db, configRun("free", 1, 1, 150.0, 0.9, std::nullopt));
    writeRun(db, configRun("never", 1, 4, 1.0, 0.7, 1.0));

    auto r = runCli({"plan", "--target", "0.85", "--deadline", "10m", "--budget", "$5", "--db", db, "--json"}, tmp.path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json plan = json::parse(r.out);
    std::vector<std::string> order;
    for (const json& row : plan["rows"]) order.push_back(row["label"]);
    EXPECT_EQ(order, (std::vector<std::string>{"fast", "free", "mid", "cheap", "never"}));
    EXPECT_DOUBLE_EQ(plan["deadline_seconds"].get<double>(), 600.0);
    EXPECT_DOUBLE_EQ(plan["budget"].get<double>(), 5.0);

    const json& fast = rowNamed(plan, "fast");
    EXPECT_EQ(fast["source"], "emulated");
    EXPECT_NEAR(fast["cost"].get<double>(), 10.0, 1e-9);
    EXPECT_EQ(fast["meets_deadline"], true);
    EXPECT_EQ(fast["meets_budget"], false);
    const json& mid5 = rowNamed(plan, "mid");
    EXPECT_EQ(mid5["source"], "measured");
    EXPECT_EQ(mid5["runs"], 5);
    EXPECT_DOUBLE_EQ(mid5["seconds"].get<double>(), 400.0);
    EXPECT_NEAR(mid5["cost"].get<double>(), 4.0, 1e-9);
    EXPECT_EQ(mid5["meets_both"], true);
    const json& cheap = rowNamed(plan, "cheap");
    EXPECT_EQ(cheap["meets_deadline"], false);
    EXPECT_EQ(cheap["meets_budget"], true);
    const json& free = rowNamed(plan, "free");
    EXPECT_TRUE(free["cost"].is_null());
    EXPECT_TRUE(free["meets_budget"].is_null()) << "no price: nobody can say";
    EXPECT_EQ(free["meets_both"], false);
    const json& never = rowNamed(plan, "never");
    EXPECT_TRUE(never["seconds"].is_null());
    EXPECT_NE(never["why"].get<std::string>().find("never reached the target (best 70.00 %"), std::string::npos)
        << never["why"];
    EXPECT_EQ(plan["fastest_within_budget"], "mid");
    EXPECT_EQ(plan["cheapest_within_deadline"], "mid");

    // The table says the same.
    auto text = runCli({"plan", "--target", "0.85", "--deadline", "10m", "--budget", "5", "--db", db}, tmp.path);
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("fastest within budget:     mid (6.7 min, $4.00)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("never: never reached the target"), std::string::npos) << text.out;
    EXPECT_LT(text.out.find("cheap "), text.out.find("never "));
    // By cost, and without limits: the cheapest known first; unknown costs after known ones.
    auto byCost = runCli({"plan", "--target", "0.85", "--db", db, "--by", "cost", "--json"}, tmp.path);
    const json c = json::parse(byCost.out);
    EXPECT_EQ(c["rows"][0]["label"], "cheap");
    EXPECT_EQ(c["rows"][3]["label"], "free");
    EXPECT_EQ(c["fastest_within_budget"], "fast");
}

TEST(CliPlan, BadLimitsAreUsageErrorsThatSayWhatWasExpected) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    writeRun(db, configRun("mlp", 1, 1, 1.0, 0.9, 1.0));
    auto deadline = runCli({"plan", "--target", "0.85", "--deadline", "2 hours", "--db", db}, tmp.path);
    EXPECT_EQ(deadline.exitCode, 2);
    EXPECT_NE(deadline.err.find("--deadline '2 hours'"), std::string::npos) << deadline.err;
    EXPECT_NE(deadline.err.find("such as 90s, 45m, 2h, 1h30m"), std::string::npos) << deadline.err;
    auto budget = runCli({"plan", "--target", "0.85", "--budget", "five dollars", "--db", db}, tmp.path);
    EXPECT_EQ(budget.exitCode, 2);
    EXPECT_NE(budget.err.find("--budget 'five dollars'"), std::string::npos) << budget.err;
    auto target = runCli({"plan", "--target", "0", "--db", db}, tmp.path);
    EXPECT_EQ(target.exitCode, 2);
    auto by = runCli({"plan", "--target", "0.5", "--by", "speed", "--db", db}, tmp.path);
    EXPECT_EQ(by.exitCode, 2);
    auto missing = runCli({"plan", "--target", "0.5", "--experiment", (tmp.path / "none.json").string(), "--db", db}, tmp.path);
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("none.json"), std::string::npos) << missing.err;
}

// One emulated A100 run of W1 with the host infeed pinned, then a sweep over three devices: the A100
// point is that run; the others are projected with its steps to target x the step time
// `trainbench-cli estimate` gives for them, and their price.
TEST(CliPlan, ProjectsSweepPointsWithoutRunsFromARunWithTheSameNumerics) {
    TempDir tmp;
    const std::string db = (tmp.path / "runs.db").string();
    const std::string body = R"("model": {"preset": "mlp"},
      "data": {"train_limit": 2048, "test_limit": 500, "drop_remainder": true},
      "train": {"batch_size": 256, "epochs": 0, "max_steps": 8, "eval_every_steps": 4, "threads": 2},
      "device": {"type": "a100-sxm4-40gb", "infeed_seconds_per_batch": 0.0005})";
    std::ofstream(tmp.path / "a100.json") << "{\"name\": \"w1\", " << body << "}";
    std::ofstream(tmp.path / "sweep.json") << "{\"name\": \"w1\", " << body
                                           << R"(, "sweep": {"device.type": ["a100-sxm4-40gb", "v100-sxm2-16gb", "tpu-v3"]}})";
    auto run = runCli({"run", (tmp.path / "a100.json").string(), "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(run.exitCode, 0) << run.err;
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun("w1");
    ASSERT_TRUE(row && row->best_accuracy);
    const double target = *row->best_accuracy;  // reached at its first evaluation that high
    int64_t stepAtTarget = 0;
    for (const auto& e : store.evals(row->id))
        if (e.accuracy >= target) {
            stepAtTarget = e.step;
            break;
        }

    auto est = runCli({"estimate", (tmp.path / "sweep.json").string(), "--json"}, tmp.path);
    ASSERT_EQ(est.exitCode, 0) << est.err;
    const json estimates = json::parse(est.out);
    auto plan = runCli({"plan", "--target", std::to_string(target), "--experiment", (tmp.path / "sweep.json").string(),
                        "--db", db, "--json"},
                       tmp.path);
    ASSERT_EQ(plan.exitCode, 0) << plan.err;
    const json p = json::parse(plan.out);
    ASSERT_EQ(p["rows"].size(), 3u) << p.dump(2);
    for (const json& e : estimates) {
        const std::string point = e["point"];
        const json& r = rowNamed(p, point);
        if (point.find("a100") != std::string::npos) {
            EXPECT_EQ(r["source"], "emulated");
            EXPECT_EQ(r["run_ids"], json::array({row->id.value}));
            EXPECT_EQ(r["runs"], 1);
            continue;
        }
        EXPECT_EQ(r["source"], "projected") << point;
        EXPECT_EQ(r["steps"], stepAtTarget) << point;
        EXPECT_EQ(r["run_ids"], json::array({row->id.value})) << point;
        const double seconds = static_cast<double>(stepAtTarget) * e["step_seconds"].get<double>();
        EXPECT_NEAR(r["seconds"].get<double>(), seconds, 1e-12 * seconds) << point;
        const double perHour = e["price_per_device_hour"].get<double>() * e["device_count"].get<double>();
        EXPECT_NEAR(r["cost"].get<double>(), seconds * perHour / 3600.0, 1e-15) << point;
    }
    // A point on this host's CPU cannot be projected: it is listed last, saying so.
    std::ofstream(tmp.path / "cpu.json") << "{\"name\": \"w1\", " << body
                                         << R"(, "sweep": {"device.type": ["a100-sxm4-40gb", "cpu"]}})";
    auto cpu = runCli({"plan", "--target", std::to_string(target), "--experiment", (tmp.path / "cpu.json").string(),
                       "--db", db},
                      tmp.path);
    ASSERT_EQ(cpu.exitCode, 0) << cpu.err;
    EXPECT_NE(cpu.out.find("w1-type_cpu: runs on this host's CPU"), std::string::npos) << cpu.out;
}
