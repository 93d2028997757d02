// A write that fails (here: the file may not grow, as on a full disk) reaches the caller as a
// StoreError naming the file, and every batch committed before it is still in the store.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "profiler/store/runstore.h"
#include "profiler/store/runwriter.h"
#include "profiler/store/storeerror.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::makeStep;
using testutil::RawDb;
using testutil::TempDir;

struct ChildReport {
    int64_t lastFlushed = 0;   // highest step flush() confirmed before the error
    int finishThrew = 0;       // finish() after the error threw StoreError too
    char message[512] = {};    // the StoreError's what()
};

TEST(RunWriterErrors, FullDiskSurfacesAndKeepsCommittedSteps) {
    TempDir dir;
    const std::string path = dir.file("runs.db");
    RunStore::open(path);
    int pipeFds[2];
    ASSERT_EQ(pipe(pipeFds), 0);

    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        close(pipeFds[0]);
        ChildReport report;
        signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG instead
        try {
            RunWriterOptions fast;
            fast.commitInterval = std::chrono::milliseconds(5);
            RunWriter writer(path, RunSpec{}, fast);
            // From here no file of this process may grow past 256 KiB: a full disk, in effect.
            rlimit limit{256 * 1024, 256 * 1024};
            setrlimit(RLIMIT_FSIZE, &limit);
            try {
                for (int64_t s = 1; s <= 1000000; ++s) {
                    writer.step(makeStep(s));
                    if (s % 50 == 0) {
                        writer.flush();
                        report.lastFlushed = s;
                    }
                }
            } catch (const StoreError& error) {
                std::strncpy(report.message, error.what(), sizeof report.message - 1);
            }
            try {
                writer.finish(RunStatus::Completed, engine::RunSummary{});
            } catch (const StoreError&) {
                report.finishThrew = 1;
            }
        } catch (...) {
            _exit(3);
        }
        if (write(pipeFds[1], &report, sizeof report) != static_cast<ssize_t>(sizeof report)) {
            _exit(4);
        }
        _exit(0);
    }

    close(pipeFds[1]);
    ChildReport report;
    const ssize_t got = read(pipeFds[0], &report, sizeof report);
    close(pipeFds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_EQ(got, static_cast<ssize_t>(sizeof report));

    const std::string message = report.message;
    EXPECT_EQ(message.rfind(path + ": could not save run 1", 0), 0u) << message;
    EXPECT_EQ(report.finishThrew, 1);
    EXPECT_GT(report.lastFlushed, 0);

    RawDb raw(path);
    EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
    RunStore store = RunStore::open(path);
    const auto row = store.run(RunId{1});
    ASSERT_TRUE(row);
    // finish() tried to store 'failed'; if even that did not fit, the run is found interrupted.
    EXPECT_TRUE(row->status == RunStatus::Failed || row->status == RunStatus::Interrupted)
        << runStatusName(row->status);
    const auto steps = store.steps(RunId{1});
    ASSERT_GE(steps.size(), static_cast<size_t>(report.lastFlushed));
    for (size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
}

}  // namespace
}  // namespace trainbench::profiler
