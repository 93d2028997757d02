// `trainbench-cli apply RUN --action N`: the file it writes is the run's own experiment with exactly
// the action's changes, named <run>-action<N>, and valid; an action number that is not in the list
// and an action that changes nothing in the file are refused, and nothing is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.h"
#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::readAll;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

// One classified run for every test: memory-bound-capacity's verdict and actions come from shapes,
// not timing, so two steps give the same list on any machine.
class CliApply : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir;
        db_ = (tmp_->path / "runs.db").string();
        const auto r = runCli({"run", std::string(TRAINBENCH_SOURCE_DIR) + "/experiments/memory-bound-capacity.json",
                               "--db", db_, "-q", "--set", "train.max_steps=2"},
                              tmp_->path);
        ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
        auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
        const auto row = store.findRun("memory-bound-capacity");
        ASSERT_TRUE(row);
        config_ = nlohmann::json::parse(row->config_json);
        verdict_ = store.verdict(row->id).value_or(profiler::Verdict{});
    }
    static void TearDownTestSuite() { delete tmp_; }
    void SetUp() override { ASSERT_FALSE(verdict_.actions.empty()) << "the run was not classified"; }

    static std::filesystem::path out(const std::string& name) { return tmp_->path / name; }

    static TempDir* tmp_;
    static std::string db_;
    static nlohmann::json config_;
    static profiler::Verdict verdict_;
};

TempDir* CliApply::tmp_ = nullptr;
std::string CliApply::db_;
nlohmann::json CliApply::config_;
profiler::Verdict CliApply::verdict_;

}  // namespace

TEST_F(CliApply, WritesTheRunsExperimentWithExactlyTheActionsChanges) {
    const auto file = out("applied.json");
    const auto r = runCli({"apply", "1", "--action", "1", "--db", db_, "-o", file.string()}, tmp_->path);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("wrote " + file.string()), std::string::npos) << r.out;
    const std::string text = readAll(file);
    EXPECT_NO_THROW(app::parseExperiment(text, file.string())) << text;

    const nlohmann::json written = nlohmann::json::parse(text);
    EXPECT_EQ(written.value("name", ""), "memory-bound-capacity-action1");
    // Against the run's resolved experiment: the action's keys, the name and the description.
    std::set<std::string> changed;
    for (const auto& op : nlohmann::json::diff(config_, written)) changed.insert(op.at("path").get<std::string>());
    std::set<std::string> expected{"/name", "/description"};
    const profiler::Action& first = verdict_.actions.front();
    ASSERT_FALSE(first.changes.empty());
    for (const profiler::Change& c : first.changes) {
        std::string pointer = "/" + c.key;
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        expected.insert(pointer);
        EXPECT_EQ(written.at(nlohmann::json::json_pointer(pointer)), c.to) << c.key;
    }
    EXPECT_EQ(changed, expected);
    EXPECT_NE(written.value("description", "").find(first.title), std::string::npos) << written.value("description", "");
}

TEST_F(CliApply, RefusesAnActionNumberOutOfRangeNamingTheCount) {
    const int count = static_cast<int>(verdict_.actions.size());
    for (int n : {0, count + 1}) {
        const auto file = out("out-of-range-" + std::to_string(n) + ".json");
        const auto r =
            runCli({"apply", "1", "--action", std::to_string(n), "--db", db_, "-o", file.string()}, tmp_->path);
        EXPECT_EQ(r.exitCode, 2) << n;
        EXPECT_NE(r.err.find("has " + std::to_string(count) + " action(s)"), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(file)) << "nothing is written";
    }
}

TEST_F(CliApply, RefusesAnActionThatChangesNothingInTheFile) {
    // Memory capacity's list ends with advice that is no setting (more memory, fewer layers).
    const auto none = std::find_if(verdict_.actions.begin(), verdict_.actions.end(),
                                   [](const profiler::Action& a) { return a.changes.empty(); });
    ASSERT_NE(none, verdict_.actions.end());
    const int n = static_cast<int>(none - verdict_.actions.begin()) + 1;
    const auto file = out("no-change.json");
    const auto r = runCli({"apply", "1", "--action", std::to_string(n), "--db", db_, "-o", file.string(), "--run"},
                          tmp_->path);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("changes nothing in the experiment file"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(file));
    auto store = profiler::RunStore::open(db_, profiler::OpenMode::ReadOnly);
    EXPECT_EQ(store.listRuns().size(), 1u) << "--run ran nothing";
}
