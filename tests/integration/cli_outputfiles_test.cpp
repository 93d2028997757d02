// Output files of the CLI are written whole or not at all (engine/io/atomicfilewriter.h): a real
// `trainbench-cli export --csv -o` killed with SIGKILL the moment its file changes leaves the old
// file or the complete new one, and no temporary file.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/telemetry/runrecords.h"
#include "profiler/store/runwriter.h"
#include "tests/integration/clirunner.h"

using namespace trainbench;
using trainbench::testing::CliProcess;
using trainbench::testing::readAll;
using trainbench::testing::runCli;
using trainbench::testing::TempDir;

namespace {

// A store with one run of `steps` steps: its CSV export is megabytes, which take a while to write.
std::string bigStore(const std::filesystem::path& dir, int64_t steps) {
    const std::string db = (dir / "runs.db").string();
    profiler::RunWriter writer(db, profiler::RunSpec{});
    for (int64_t s = 1; s <= steps; ++s) {
        engine::StepRecord r;
        r.step = s;
        r.loss = 1.0 / static_cast<double>(s);
        r.step_seconds = 0.0123456789;
        r.samples = 64;
        r.wall_seconds = static_cast<double>(s) * 0.0123456789;
        writer.step(r);
    }
    writer.finish(profiler::RunStatus::Completed, engine::RunSummary{});
    return db;
}

}  // namespace

TEST(CliOutputFiles, AKilledCsvExportLeavesTheOldFileOrTheWholeNewOne) {
    TempDir tmp;
    const std::string db = bigStore(tmp.path, 50000);
    const auto reference = tmp.path / "reference.csv";
    auto ref = runCli({"export", "1", "--db", db, "--csv", "-o", reference.string()}, tmp.path);
    ASSERT_EQ(ref.exitCode, 0) << ref.err;
    const std::string complete = readAll(reference);
    ASSERT_GT(complete.size(), 3u << 20);

    const auto folder = tmp.path / "exports";
    std::filesystem::create_directories(folder);
    const auto target = folder / "steps.csv";
    const std::string old = "step,loss\n1,0.5\n";
    std::ofstream(target) << old;
    CliProcess exporter({"export", "1", "--db", db, "--csv", "-o", target.string()}, tmp.path);
    // SIGKILL at the first sign of the file changing (a plain write truncates it, then fills it).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!exporter.finished() && std::filesystem::file_size(target) == old.size() &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    exporter.signal(SIGKILL);
    exporter.wait();

    const std::string now = readAll(target);
    EXPECT_TRUE(now == old || now == complete) << "a part file of " << now.size() << " bytes (complete: "
                                               << complete.size() << ")";
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(folder)) names.push_back(e.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"steps.csv"}) << "no temporary file is left";
}
