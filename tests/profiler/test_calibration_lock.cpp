// The calibration lock: a file of the user's own (0600, in the XDG runtime or cache folder), held by
// one process at a time; a symbolic link or other file planted at its path is refused, not followed.
#include "profiler/machine/calibrationlock.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "tests/profiler/storetestutil.h"

namespace trainbench::profiler {
namespace {

using testutil::TempDir;
namespace fs = std::filesystem;

// Sets an environment variable for one scope, then puts back what was there.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

// The CalibrationLockError's message (caught as its base, so that this file also builds against
// the code before the error existed, to show the test failing there).
std::string errorOf(const std::string& path) {
    try {
        CalibrationLock lock(std::chrono::milliseconds(0), path);
        return lock.held() ? "no error, and the lock is held" : "no error";
    } catch (const std::runtime_error& e) {
        return e.what();
    }
}

TEST(CalibrationLock, LivesInTheUsersRuntimeOrCacheFolder) {
    {
        ScopedEnv runtime("XDG_RUNTIME_DIR", "/run/user/1000");
        EXPECT_EQ(CalibrationLock::defaultPath(), "/run/user/1000/trainbench/calibration.lock");
    }
    ScopedEnv runtime("XDG_RUNTIME_DIR", nullptr);
    {
        ScopedEnv cache("XDG_CACHE_HOME", "/home/ada/.cache-elsewhere");
        EXPECT_EQ(CalibrationLock::defaultPath(), "/home/ada/.cache-elsewhere/trainbench/calibration.lock");
    }
    ScopedEnv cache("XDG_CACHE_HOME", "relative/is/ignored");
    ScopedEnv home("HOME", "/home/ada");
    EXPECT_EQ(CalibrationLock::defaultPath(), "/home/ada/.cache/trainbench/calibration.lock");
    EXPECT_EQ(CalibrationLock::defaultPath().rfind("/tmp", 0), std::string::npos);
}

TEST(CalibrationLock, IsAPrivateFileHeldByOneProcessAtATime) {
    TempDir dir;
    const mode_t old = ::umask(022);
    const std::string path = (dir.path() / "trainbench" / "calibration.lock").string();  // folder made too
    {
        CalibrationLock first(std::chrono::milliseconds(0), path);
        EXPECT_TRUE(first.held());
        struct stat st {};
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0600u);
        ASSERT_EQ(::stat((dir.path() / "trainbench").c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0700u);
        CalibrationLock second(std::chrono::milliseconds(20), path);  // flock: per open file, so also in-process
        EXPECT_FALSE(second.held());
    }
    CalibrationLock again(std::chrono::milliseconds(0), path);
    EXPECT_TRUE(again.held()) << "released when its holder went away";
    ::umask(old);
}

TEST(CalibrationLock, ALinkPlantedAtItsPathIsRefusedNotFollowed) {
    TempDir dir;
    const fs::path victim = dir.path() / "victim";  // e.g. a file of the user's an attacker wants created
    const std::string path = dir.file("calibration.lock");
    fs::create_symlink(victim, path);
    EXPECT_EQ(errorOf(path), path + ": the calibration lock is a symbolic link: refused, not followed (remove it; "
                                    "trainbench keeps a plain file there)");
    EXPECT_FALSE(fs::exists(victim)) << "the link's target was not created";

    // A link to an existing file is refused the same way, and the file is not opened or changed.
    std::ofstream(victim) << "precious";
    EXPECT_NE(errorOf(path).find("is a symbolic link: refused"), std::string::npos);

    // A link in place of its folder too.
    fs::create_directories(dir.path() / "real");
    fs::create_directory_symlink(dir.path() / "real", dir.path() / "trainbench");
    const std::string viaFolder = (dir.path() / "trainbench" / "calibration.lock").string();
    EXPECT_EQ(errorOf(viaFolder), (dir.path() / "trainbench").string() +
                                      ": the calibration lock's folder is a symbolic link: refused, not followed");
    EXPECT_FALSE(fs::exists(dir.path() / "real" / "calibration.lock"));

    // A pipe (or anything but a plain file) is refused without blocking.
    const std::string fifo = dir.file("fifo.lock");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(errorOf(fifo), fifo + ": the calibration lock is not a regular file: refused");
}

}  // namespace
}  // namespace trainbench::profiler
