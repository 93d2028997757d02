// The one atomic file writer: the target holds the old file or the whole new one, whatever happens
// to the writing process (an error, an abandoned write, SIGKILL, a full disk), and no temporary file
// outlives it. Kills are real (a forked writer, SIGKILL between write and commit); the full disk is a
// real tmpfs of 1 MiB.
#include "engine/io/atomicfilewriter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "engine/io/tempfiles.h"
#include "engine/util/errors.h"
#include "tests/engine/tempdirtest.h"

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;
using test::readText;
using test::writeText;

class AtomicFileWriterTest : public test::TempDirTest {
protected:
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }
    static unsigned modeOf(const std::string& p) {
        struct stat st {};
        EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
        return st.st_mode & 07777;
    }
};

// Makes the kernel refuse O_TMPFILE in this process as a file system without it does (EOPNOTSUPP):
// a seccomp filter on openat() with __O_TMPFILE in its flags. Every file system this machine
// mounts supports O_TMPFILE, so this is how the writer's other path runs for real. For a child.
bool refuseTmpFile() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),  // the flags' low half
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_TMPFILE & ~O_DIRECTORY, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EOPNOTSUPP & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    const sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// A child process that writes `bytes` bytes to `target` through the writer (flushed, so they are
// on disk in the temporary file), tells the parent over a pipe, and waits to be killed before it
// commits. Returns the child's pid once it has written. With `noTmpFile`, O_TMPFILE is refused.
pid_t writerKilledBeforeCommit(const std::string& target, size_t bytes, bool noTmpFile = false) {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        if (noTmpFile && !refuseTmpFile()) ::_exit(4);
        try {
            AtomicFileWriter w(target);
            w.write(std::string(bytes, 'n'));  // larger than the buffer: goes straight to the file
            char ready = 'w';
            if (::write(fds[1], &ready, 1) != 1) ::_exit(3);
            for (;;) ::pause();  // never commits
        } catch (...) {
            ::_exit(2);
        }
    }
    ::close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    char ready = 0;
    const bool wrote = ::poll(&p, 1, 60'000) == 1 && ::read(fds[0], &ready, 1) == 1;
    ::close(fds[0]);
    if (!wrote) {
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        return -1;
    }
    return child;
}

TEST_F(AtomicFileWriterTest, CommitPutsTheWholeFileInPlace) {
    const std::string target = path("out.csv");
    writeText(target, "old");
    AtomicFileWriter w(target, {.what = "CSV export"});
    w.write("a,b\n");
    w.write(std::string(3u << 20, 'x'));  // past the buffer
    w.buffer() += "tail";
    EXPECT_EQ(readText(target), "old") << "nothing shows before commit()";
    EXPECT_EQ(names(), std::vector<std::string>{"out.csv"}) << "the file being written has no name";
    w.commit();
    EXPECT_EQ(readText(target), "a,b\n" + std::string(3u << 20, 'x') + "tail");
    EXPECT_EQ(w.bytesWritten(), fs::file_size(target));
    EXPECT_EQ(names(), std::vector<std::string>{"out.csv"});
    EXPECT_THROW(w.commit(), std::logic_error);
}

// A piece large enough to skip the buffer (half of it or more) but small enough to fit beside what
// is buffered still goes out after it: a checkpoint's header followed by W2's 900 KB parameter shard
// came out shard first (found by loading a cnn run's checkpoint for inference, issue 21).
TEST_F(AtomicFileWriterTest, APieceThatSkipsTheBufferGoesOutAfterWhatIsBuffered) {
    const std::string target = path("w2.ckpt");
    for (size_t piece : {size_t{512} << 10, size_t{900} << 10, (size_t{1} << 20) - 7}) {
        AtomicFileWriter w(target);
        w.write("header");
        w.write(std::string(piece, 'p'));
        w.write("tail");
        w.commit();
        EXPECT_EQ(readText(target), "header" + std::string(piece, 'p') + "tail") << piece << " bytes";
    }
}

TEST_F(AtomicFileWriterTest, AnAbandonedWriteLeavesTheOldFileAndNothingElse) {
    const std::string target = path("report.html");
    writeText(target, "old report");
    {
        AtomicFileWriter w(target);
        w.write(std::string(2u << 20, 'n'));
    }
    EXPECT_EQ(readText(target), "old report");
    EXPECT_EQ(names(), std::vector<std::string>{"report.html"});
    {
        AtomicFileWriter w(path("new.html"));
        w.write("never committed");
    }
    EXPECT_EQ(names(), std::vector<std::string>{"report.html"}) << "no file appears without commit()";
}

TEST_F(AtomicFileWriterTest, AWriterKilledBeforeCommitLeavesTheOldFileAndNoTemporaryFile) {
    const std::string target = path("ckpt");
    writeText(target, "old checkpoint");
    pid_t child = writerKilledBeforeCommit(target, 4u << 20);
    ASSERT_GT(child, 0) << "the writer never got to write";
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    EXPECT_EQ(readText(target), "old checkpoint");
    EXPECT_EQ(names(), std::vector<std::string>{"ckpt"}) << "a killed writer leaves no temporary file";

    // And with no old file: nothing at all.
    child = writerKilledBeforeCommit(path("fresh"), 4u << 20);
    ASSERT_GT(child, 0);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    EXPECT_EQ(names(), std::vector<std::string>{"ckpt"});
}

TEST_F(AtomicFileWriterTest, ModeIsTheNewFilesWhateverTheOldOneHad) {
    const mode_t old = ::umask(022);
    const std::string secret = path("tfjob.yaml");
    writeText(secret, "old");
    ::chmod(secret.c_str(), 0644);
    writeFileAtomically(secret, "token", {.mode = 0600});
    EXPECT_EQ(modeOf(secret), 0600u);
    writeFileAtomically(path("fresh.yaml"), "token", {.mode = 0600});
    EXPECT_EQ(modeOf(path("fresh.yaml")), 0600u);
    writeFileAtomically(path("plain.csv"), "x");
    EXPECT_EQ(modeOf(path("plain.csv")), 0644u);
    ::umask(077);
    writeFileAtomically(path("private.csv"), "x");
    EXPECT_EQ(modeOf(path("private.csv")), 0600u) << "the umask is respected";
    ::umask(old);
}

TEST_F(AtomicFileWriterTest, ALinkAtTheTargetIsReplacedNotFollowed) {
    const std::string elsewhere = path("elsewhere");
    writeText(elsewhere, "not yours to write");
    fs::create_symlink(elsewhere, path("out.json"));
    writeFileAtomically(path("out.json"), "trace");
    EXPECT_FALSE(fs::is_symlink(path("out.json")));
    EXPECT_EQ(readText(path("out.json")), "trace");
    EXPECT_EQ(readText(elsewhere), "not yours to write");
}

TEST_F(AtomicFileWriterTest, APipeOrDeviceIsWrittenInPlace) {
    // Renaming over /dev/null (we may be root) would replace the device with a file.
    writeFileAtomically("/dev/null", "discarded");
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    // `-o /dev/fd/1 > file` (or /dev/stdout, which leads to the same place): the bytes go into the
    // file the shell opened. (/dev/fd/1 rather than /dev/stdout: a writer that wrongly replaced
    // the link fails here, in /proc, instead of replacing /dev/stdout for the whole machine.)
    for (const char* fd1 : {"/dev/fd/1", "/proc/self/fd/1"}) {
        const pid_t child = ::fork();
        if (child == 0) {
            const int out = ::open(path("redirected").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (out < 0 || ::dup2(out, 1) < 0) ::_exit(3);
            try {
                writeFileAtomically(fd1, "to the redirection");
            } catch (...) {
                ::_exit(2);
            }
            ::_exit(0);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << fd1 << ": status " << status;
        EXPECT_EQ(readText(path("redirected")), "to the redirection") << fd1;
    }
    // /dev/full takes the open and fails the data: the error says the disk is full.
    AtomicFileWriter full("/dev/full", {.what = "TFRecord file"});
    full.write("x");
    try {
        full.commit();
        ADD_FAILURE() << "no error";
    } catch (const FileWriteError& e) {
        EXPECT_STREQ(e.what(), "/dev/full: TFRecord file not saved: cannot write (0 bytes written): No space left "
                               "on device (disk full)");
    }
}

TEST_F(AtomicFileWriterTest, ErrorsNameThePathAndTheStep) {
    const std::string missing = path("no/such/folder/out.csv");
    const std::string msg = test::errorOf([&] { writeFileAtomically(missing, "x", {.what = "CSV export"}); });
    EXPECT_EQ(msg, missing + ": CSV export not saved: cannot open the folder " + path("no/such/folder") +
                       ": No such file or directory");
    // rename() cannot put a file over a folder.
    fs::create_directories(dir_ / "taken" / "inside");
    const std::string onFolder = test::errorOf([&] { writeFileAtomically(path("taken"), "x"); });
    const std::string renameFailed = ": file not saved: cannot rename the temporary file " + path(".taken.trainbench-tmp-");
    EXPECT_EQ(onFolder.rfind(path("taken") + renameFailed, 0), 0u) << onFolder;
    EXPECT_NE(onFolder.find(" over it: Is a directory"), std::string::npos) << onFolder;
    EXPECT_EQ(names(), std::vector<std::string>{"taken"}) << "the temporary file was removed";
    EXPECT_THROW(AtomicFileWriter(""), FileWriteError);
}

TEST(TempFiles, NamesAreHiddenUniqueAndRecognised) {
    const std::string a = tempFileName("train-00000-of-00004.tfrecord");
    const std::string b = tempFileName("train-00000-of-00004.tfrecord");
    EXPECT_NE(a, b);
    EXPECT_EQ(a.rfind(".train-00000-of-00004.tfrecord.trainbench-tmp-" + std::to_string(::getpid()) + "-", 0), 0u) << a;
    pid_t pid = 0;
    EXPECT_TRUE(isTempFileName(a, &pid));
    EXPECT_EQ(pid, ::getpid());
    EXPECT_LE(tempFileName(std::string(255, 'n')).size(), 255u) << "within NAME_MAX";
    for (const char* other : {"train.trainbench-tmp-1-2", ".trainbench-tmp-1-2", ".x.trainbench-tmp-1-",
                              ".x.trainbench-tmp--2", ".x.trainbench-tmp-a-2", ".x.trainbench-tmp-0-1", ".x.tmp.1.2"})
        EXPECT_FALSE(isTempFileName(other, nullptr)) << other;
}

// Where O_TMPFILE is refused, or at the instant between link and rename, a killed writer leaves a
// named temporary file. The next process to write into the folder removes the ones whose writer is
// gone, and only those. Run in a fresh child: each process sweeps a folder once.
TEST_F(AtomicFileWriterTest, StaleTemporaryFilesOfDeadWritersAreSweptByTheNextWrite) {
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ::waitpid(dead, nullptr, 0);  // a pid that is no process now
    const std::string stale = ".ckpt.trainbench-tmp-" + std::to_string(dead) + "-0";
    writeText(dir_ / stale, "half a checkpoint");
    writeText(dir_ / "notes.trainbench-tmp-1-2", "a user's file that only looks alike");
    // A writer this process cannot see as alive (another host or pid namespace) but which holds the
    // lock every writer keeps on its file: left alone.
    const std::string held = ".trace.trainbench-tmp-" + std::to_string(dead) + "-1";
    writeText(dir_ / held, "in use elsewhere");
    const int heldFd = ::open((dir_ / held).c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_EQ(::flock(heldFd, LOCK_EX), 0);
    // A live writer of this host (this test process): left alone.
    const std::string live = ".report.trainbench-tmp-" + std::to_string(::getpid()) + "-0";
    writeText(dir_ / live, "being written");

    const pid_t child = ::fork();
    if (child == 0) {
        try {
            writeFileAtomically((dir_ / "ckpt").string(), "new");
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ::close(heldFd);
    EXPECT_EQ(names(), (std::vector<std::string>{live, held, "ckpt", "notes.trainbench-tmp-1-2"}));
}

// Where the file system refuses O_TMPFILE the temporary file has a name from the start: a whole
// write still leaves nothing else; a writer killed before commit leaves its named file (nobody is
// left to remove it) and never a part file under the target; the next write into the folder, by
// another process, removes the leftover.
TEST_F(AtomicFileWriterTest, WithoutOTmpfileANamedTemporaryFileIsUsedAndALeftoverIsSwept) {
    const std::string target = path("export.csv");
    writeText(target, "old");
    const pid_t whole = ::fork();
    if (whole == 0) {
        if (!refuseTmpFile()) ::_exit(4);
        if (::open(dir_.c_str(), O_TMPFILE | O_WRONLY, 0600) >= 0 || errno != EOPNOTSUPP) ::_exit(5);
        try {
            writeFileAtomically(target, "whole");
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(whole, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    ASSERT_NE(WEXITSTATUS(status), 4) << "cannot install a seccomp filter here";
    ASSERT_EQ(WEXITSTATUS(status), 0) << "5: O_TMPFILE was not refused; 2: the write failed";
    EXPECT_EQ(readText(target), "whole");
    EXPECT_EQ(names(), std::vector<std::string>{"export.csv"});

    const pid_t killed = writerKilledBeforeCommit(target, 4u << 20, /*noTmpFile=*/true);
    ASSERT_GT(killed, 0);
    ::kill(killed, SIGKILL);
    ::waitpid(killed, nullptr, 0);
    EXPECT_EQ(readText(target), "whole");
    std::vector<std::string> left = names();
    ASSERT_EQ(left.size(), 2u);
    pid_t owner = 0;
    EXPECT_TRUE(isTempFileName(left[0], &owner)) << left[0];
    EXPECT_EQ(owner, killed);

    const pid_t next = ::fork();  // a fresh process: each sweeps a folder once
    if (next == 0) {
        try {
            writeFileAtomically(path("report.html"), "next");
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    ::waitpid(next, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(names(), (std::vector<std::string>{"export.csv", "report.html"}));
}

// ENOSPC for real: a 1 MiB tmpfs. The old file survives a write that does not fit, the message
// says the disk is full and where, nothing is left behind, and the next write that fits works.
TEST_F(AtomicFileWriterTest, AFullDiskKeepsTheOldFile) {
    const fs::path mnt = dir_ / "small";
    fs::create_directories(mnt);
    if (::mount("trainbench-test", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << "): needs root or CAP_SYS_ADMIN";
    struct Unmount {
        std::string at;
        ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
    } unmount{mnt.string()};
    const std::string target = (mnt / "export.csv").string();
    writeFileAtomically(target, "old rows\n");
    const std::string msg =
        test::errorOf([&] { writeFileAtomically(target, std::string(2u << 20, 'r'), {.what = "CSV export"}); });
    EXPECT_EQ(msg.rfind(target + ": CSV export not saved: cannot write (", 0), 0u) << msg;
    EXPECT_NE(msg.find("No space left on device (disk full)"), std::string::npos) << msg;
    EXPECT_EQ(readText(target), "old rows\n");
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(mnt)) left.push_back(e.path().filename().string());
    EXPECT_EQ(left, std::vector<std::string>{"export.csv"});
    writeFileAtomically(target, std::string(512u << 10, 's'));
    EXPECT_EQ(fs::file_size(target), 512u << 10);
}

}  // namespace
}  // namespace trainbench::engine
