// The run attributes a run writes are exactly the ones profiler/store/runattributes.h documents
// for that kind of run: two sample runs through `trainbench-cli run` (a streaming, autotuned run
// that checkpoints; a warm start from it on an emulated GPU), their run_attributes compared with
// kRunAttributes' rows. A key written without a row, or a row whose run writes nothing, fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "profiler/store/runattributes.h"
#include "profiler/store/runstore.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using profiler::runattr::When;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

// 4 features, 10 classes (as logreg has), `rows` rows.
void writeCsv(const std::filesystem::path& path, int rows) {
    std::ofstream f(path);
    f << "a,b,c,d,label\n";
    for (int i = 0; i < rows; ++i) f << i % 7 << "," << i % 5 << "," << i % 3 << "," << (i * 0.01) << "," << i % 10 << "\n";
}

// logreg on the CSV files, 20 steps of 32; `train` goes into the train section, `sections` after it.
std::string writeExperiment(const std::filesystem::path& dir, const std::string& name, const std::string& data,
                            const std::string& train, const std::string& sections = "") {
    const auto path = dir / (name + ".json");
    std::ofstream(path) << R"({"name": ")" << name << R"(", "model": {"preset": "logreg"},
      "data": {"dataset": "csv", "train_files": "train.csv", "test_files": "test.csv", "drop_remainder": true)"
                        << data << R"(},
      "train": {"batch_size": 32, "epochs": 0, "max_steps": 20, "eval_every_steps": 0, "threads": 1)" << train
                        << "}" << sections << "}";
    return path.string();
}

std::map<std::string, std::string> attributesOf(const std::string& db, const std::string& name) {
    auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
    const auto row = store.findRun(name);
    if (!row) {
        ADD_FAILURE() << "no run " << name;
        return {};
    }
    std::map<std::string, std::string> a;
    for (auto& [k, v] : store.attributes(row->id)) a[k] = v;
    return a;
}

// Holds what a run wrote to the rows of kRunAttributes whose condition holds for it. The hardware
// counters of a profiled run depend on the host: with them, each counter is written when the host
// counted it.
void expectExactlyDocumented(const std::map<std::string, std::string>& written, std::set<When> when) {
    const bool counters = written.count(profiler::runattr::kHwAvailable) &&
                          written.at(profiler::runattr::kHwAvailable) == "true";
    if (when.count(When::Profiled)) when.insert(counters ? When::ProfiledCounters : When::ProfiledNoCounters);
    std::set<std::string> documented;
    for (const profiler::runattr::RunAttribute& a : profiler::runattr::kRunAttributes) {
        const std::string key(a.key);
        documented.insert(key);
        const bool expected = when.count(a.when) > 0;
        const bool optional = a.when == When::ProfiledCounters && a.key != profiler::runattr::kHwSeconds;
        if (expected && !optional) {
            EXPECT_EQ(written.count(key), 1u) << key << " is documented for this run but not written";
        } else if (!expected) {
            EXPECT_EQ(written.count(key), 0u) << key << " is written, but documented for other runs";
        }
    }
    for (const auto& [key, value] : written) EXPECT_EQ(documented.count(key), 1u) << key << " is not in kRunAttributes";
}

}  // namespace

TEST(CliRunAttributes, SampleRunsWriteExactlyTheDocumentedKeys) {
    TempDir tmp;
    writeCsv(tmp.path / "train.csv", 640);
    writeCsv(tmp.path / "test.csv", 96);
    const std::string db = (tmp.path / "runs.db").string();

    const std::string sourceFile = writeExperiment(tmp.path, "source", R"(, "pipeline": {"autotune": true})",
                                                   R"(, "checkpoint_at_end": true)");
    const auto source = runCli({"run", sourceFile, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(source.exitCode, 0) << source.err << source.out;
    expectExactlyDocumented(attributesOf(db, "source"),
                            {When::EveryRun, When::Streaming, When::Autotuned, When::Checkpointing, When::Profiled,
                             When::ProfiledPastWarmup});

    const std::string warmFile =
        writeExperiment(tmp.path, "warm", "", R"(, "warm_start": {"run": 1})",
                        R"(, "device": {"type": "v100-sxm2-16gb", "infeed_seconds_per_batch": 0.0002})");
    const auto warm = runCli({"run", warmFile, "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(warm.exitCode, 0) << warm.err << warm.out;
    expectExactlyDocumented(attributesOf(db, "warm"),
                            {When::EveryRun, When::Streaming, When::WarmStarted, When::WarmStartStepKnown,
                             When::Emulated, When::EmulatedInProcess, When::Profiled, When::ProfiledEmulated});

    // A prediction with the source's checkpoint: what it ran, on what, into which file.
    const auto predict = runCli({"predict", "source", "-o", (tmp.path / "p.csv").string(), "--db", db, "-q"}, tmp.path);
    ASSERT_EQ(predict.exitCode, 0) << predict.err << predict.out;
    expectExactlyDocumented(attributesOf(db, "predict-source"), {When::Predicting, When::Predicted});

    // Load tests of the source, each with the server it starts: one scenario, and a QPS search.
    const auto loadtest = runCli({"loadtest", "source", "--db", db, "-q", "--min-queries", "20", "--min-duration", "0s",
                                  "--name", "lt"},
                                 tmp.path);
    ASSERT_EQ(loadtest.exitCode, 0) << loadtest.err << loadtest.out;
    expectExactlyDocumented(attributesOf(db, "lt"), {When::LoadTesting, When::LoadTestOwnServer, When::LoadTestOfRun});
    const auto search = runCli({"loadtest", "source", "--db", db, "-q", "--find-max-qps", "--qps", "20", "--p99", "2s",
                                "--max-probes", "2", "--min-queries", "20", "--min-duration", "0s", "--name", "lt-search"},
                               tmp.path);
    ASSERT_EQ(search.exitCode, 0) << search.err << search.out;
    expectExactlyDocumented(attributesOf(db, "lt-search"),
                            {When::LoadTesting, When::LoadTestOwnServer, When::LoadTestOfRun, When::LoadTestSearched});
}
