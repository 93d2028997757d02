// Checkpoint files: round trips, the byte layout of docs/checkpoints.md, lookups, and atomic
// replacement (a failed write and a crash mid-write both leave the previous checkpoint in place).
// Damaged files are in test_checkpointdamage.cpp.
#include "engine/checkpoint/checkpoint.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "recordtestutil.h"

namespace trainbench::engine {
namespace {

using namespace recordtest;

// Ordinary values and the awkward ones (-0, infinities, NaN, denormals), which must come back bit
// for bit.
std::vector<float> sampleFloats(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = (static_cast<float>(i % 1000) - 500.0f) * scale;
    const float specials[] = {-0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()};
    for (size_t i = 0; i < std::size(specials) && i < n; ++i) v[n - 1 - i] = specials[i];
    return v;
}

Bytes bytesOf(const std::vector<float>& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    return Bytes(p, p + v.size() * sizeof(float));
}

using CheckpointFile = TempDirTest;

TEST_F(CheckpointFile, RoundTripKeepsShardsInOrderBitForBit) {
    const std::vector<float> small = sampleFloats(1000, 0.25f);
    const std::vector<float> big = sampleFloats((10u << 20) / sizeof(float) + 3, 1e-3f);  // ~10 MB
    Bytes raw(300);
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 7);
    const std::string metadata = R"({"step": 1200, "epoch": 3, "seed": 42, "strategy": "mirrored"})";

    CheckpointWriter w;
    w.addFloats("dense1.weight", small);
    w.add("empty", nullptr, 0);
    w.add("raw", raw.data(), raw.size());
    w.addFloats("big", big);
    w.setMetadata(metadata);
    EXPECT_EQ(w.shardCount(), 4u);
    const std::string p = path("model.ckpt");
    w.commit(p);
    EXPECT_EQ(fs::file_size(p), w.fileBytes());

    const Checkpoint ck = Checkpoint::read(p);
    EXPECT_EQ(ck.path(), p);
    EXPECT_EQ(ck.metadata(), metadata);
    ASSERT_EQ(ck.shards().size(), 4u);
    EXPECT_EQ(ck.shards()[0].name, "dense1.weight");
    EXPECT_EQ(ck.shards()[1].name, "empty");
    EXPECT_EQ(ck.shards()[2].name, "raw");
    EXPECT_EQ(ck.shards()[3].name, "big");
    EXPECT_TRUE(ck.has("raw"));
    EXPECT_FALSE(ck.has("missing"));
    EXPECT_EQ(ck.bytes("dense1.weight"), bytesOf(small));
    EXPECT_TRUE(ck.bytes("empty").empty());
    EXPECT_TRUE(ck.floats("empty").empty());
    EXPECT_EQ(ck.bytes("raw"), raw);
    EXPECT_EQ(bytesOf(ck.floats("big")), bytesOf(big));  // NaN != NaN: compare the bits
    std::vector<float> into(small.size());
    ck.copyFloats("dense1.weight", into);
    EXPECT_EQ(bytesOf(into), bytesOf(small));
}

TEST_F(CheckpointFile, EmptyCheckpointRoundTrips) {
    const std::string p = path("empty.ckpt");
    CheckpointWriter().commit(p);
    EXPECT_EQ(fs::file_size(p), 44u);  // header and the empty table's CRC
    const Checkpoint ck = Checkpoint::read(p);
    EXPECT_TRUE(ck.shards().empty());
    EXPECT_EQ(ck.metadata(), "");
}

TEST_F(CheckpointFile, LayoutIsTheDocumentedOne) {
    CheckpointWriter w;
    const uint8_t a[] = {1, 2, 3};
    w.add("a", a, sizeof a);
    w.add("bc", nullptr, 0);
    w.setMetadata("{}");
    const std::string p = path("layout.ckpt");
    w.commit(p);

    Bytes want = {0x89, 'T', 'B', 'C', 'K', 'P', 'T', '\n'};
    putLe(want, 1, 4);                  // version
    putLe(want, 2, 4);                  // shards
    putLe(want, 16 + 1 + 16 + 2, 8);    // table bytes
    putLe(want, 2, 8);                  // metadata bytes
    putLe(want, crcBitwise(reinterpret_cast<const uint8_t*>("{}"), 2), 4);
    putLe(want, crcBitwise(want.data(), 36), 4);
    const size_t table = want.size();
    putLe(want, 1, 4);
    want.push_back('a');
    putLe(want, 3, 8);
    putLe(want, crcBitwise(a, 3), 4);
    putLe(want, 2, 4);
    want.push_back('b');
    want.push_back('c');
    putLe(want, 0, 8);
    putLe(want, crcBitwise(nullptr, 0), 4);
    putLe(want, crcBitwise(want.data() + table, want.size() - table), 4);
    want.push_back('{');
    want.push_back('}');
    want.insert(want.end(), a, a + 3);
    EXPECT_EQ(readFile(p), want);
}

TEST_F(CheckpointFile, LookupErrorsNameTheShardAndSizes) {
    CheckpointWriter w;
    const uint8_t five[5] = {};
    w.add("odd", five, sizeof five);
    w.addFloats("w", std::vector<float>(3, 1.0f));
    const std::string p = path("c.ckpt");
    w.commit(p);
    const Checkpoint ck = Checkpoint::read(p);
    EXPECT_EQ(errorOf([&] { ck.bytes("nope"); }), p + ": checkpoint has no shard 'nope' (it holds 'odd', 'w')");
    EXPECT_EQ(errorOf([&] { ck.floats("odd"); }), p + ": shard 'odd' holds 5 bytes, not a whole number of float32 values");
    std::vector<float> four(4);
    EXPECT_EQ(errorOf([&] { ck.copyFloats("w", four); }),
              p + ": shard 'w' holds 12 bytes (3 float32 values), 4 expected");
}

TEST_F(CheckpointFile, WriterRefusesBadNames) {
    CheckpointWriter w;
    EXPECT_THROW(w.add("", nullptr, 0), std::invalid_argument);
    EXPECT_THROW(w.add(std::string(4097, 'n'), nullptr, 0), std::invalid_argument);
    w.add(std::string(4096, 'n'), nullptr, 0);
    w.add("x", nullptr, 0);
    EXPECT_THROW(w.add("x", nullptr, 0), std::invalid_argument);
    EXPECT_EQ(w.shardCount(), 2u);
}

TEST_F(CheckpointFile, CommitReplacesAnOlderCheckpoint) {
    const std::string p = path("run.ckpt");
    CheckpointWriter older;
    older.addFloats("params", sampleFloats(5000, 1.0f));
    older.setMetadata(R"({"step": 100})");
    older.commit(p);
    CheckpointWriter newer;
    newer.addFloats("params", std::vector<float>{1.0f, 2.0f});
    newer.setMetadata(R"({"step": 200})");
    newer.commit(p);
    newer.commit(p);  // a writer may commit again

    const Checkpoint ck = Checkpoint::read(p);
    EXPECT_EQ(ck.metadata(), R"({"step": 200})");
    EXPECT_EQ(ck.floats("params"), (std::vector<float>{1.0f, 2.0f}));
    EXPECT_EQ(fs::file_size(p), newer.fileBytes());
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);  // no temp files
}

TEST_F(CheckpointFile, OpenErrorsNameThePath) {
    const std::string missing = path("missing.ckpt");
    EXPECT_EQ(errorOf([&] { Checkpoint::read(missing); }), missing + ": cannot open checkpoint: No such file or directory");
    EXPECT_EQ(errorOf([&] { Checkpoint::read(dir_.string()); }), dir_.string() + ": not a checkpoint (not a regular file)");
}

// ---- Atomic replacement -------------------------------------------------------------------------

// Forks; the child limits the size of any file it writes to `limit` bytes (RLIMIT_FSIZE holds for
// root too, unlike permissions) and commits `w` to `path`. With `crash`, going over the limit kills
// the child on the spot (SIGXFSZ, exit code 42, no unwinding); otherwise the write fails with EFBIG
// and the child reports the CheckpointError's message. Returns the child's exit code and message.
std::pair<int, std::string> commitInLimitedChild(const CheckpointWriter& w, const std::string& path, rlim_t limit,
                                                 bool crash) {
    int fds[2];
    if (pipe(fds) != 0) return {-1, "pipe failed"};
    const pid_t child = fork();
    if (child < 0) return {-1, "fork failed"};
    if (child == 0) {
        close(fds[0]);
        struct sigaction sa {};
        sa.sa_handler = crash ? +[](int) { _exit(42); } : SIG_IGN;
        sigaction(SIGXFSZ, &sa, nullptr);
        const rlimit rl{limit, limit};
        setrlimit(RLIMIT_FSIZE, &rl);
        std::string msg = "no error";
        try {
            w.commit(path);
        } catch (const CheckpointError& e) {
            msg = e.what();
        }
        const ssize_t n = write(fds[1], msg.data(), msg.size());
        _exit(n == static_cast<ssize_t>(msg.size()) ? 0 : 3);
    }
    close(fds[1]);
    std::string msg;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg};
}

class CheckpointAtomic : public TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        CheckpointWriter old;
        old.addFloats("params", sampleFloats(1000, 2.0f));
        old.setMetadata(R"({"step": 1})");
        old.commit(target());
        oldBytes = readFile(target());
        bigger.addFloats("params", sampleFloats(1u << 18, 3.0f));  // 1 MiB
        bigger.setMetadata(R"({"step": 2})");
    }
    std::string target() const { return path("run.ckpt"); }
    void expectOldCheckpointIntact() {
        EXPECT_EQ(readFile(target()), oldBytes);
        EXPECT_EQ(Checkpoint::read(target()).metadata(), R"({"step": 1})");
    }
    std::vector<std::string> files() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

    Bytes oldBytes;
    CheckpointWriter bigger;
};

TEST_F(CheckpointAtomic, FailedWriteKeepsTheOldCheckpointAndRemovesTheTempFile) {
    const auto [code, msg] = commitInLimitedChild(bigger, target(), 64 << 10, /*crash=*/false);
    ASSERT_EQ(code, 0) << msg;
    EXPECT_EQ(msg, target() + ": checkpoint not saved: cannot write (65536 of " + std::to_string(bigger.fileBytes()) +
                       " bytes written): File too large")
        << msg;
    expectOldCheckpointIntact();
    EXPECT_EQ(files(), std::vector<std::string>{"run.ckpt"});
}

TEST_F(CheckpointAtomic, CrashMidWriteLeavesTheOldCheckpointAndNoTemporaryFile) {
    const auto [code, msg] = commitInLimitedChild(bigger, target(), 64 << 10, /*crash=*/true);
    ASSERT_EQ(code, 42) << "the child should have died in the middle of the write: " << msg;
    expectOldCheckpointIntact();
    // The partial file had no name (O_TMPFILE): it went with the process.
    EXPECT_EQ(files(), std::vector<std::string>{"run.ckpt"});
    // The next commit goes through regardless.
    bigger.commit(target());
    EXPECT_EQ(Checkpoint::read(target()).metadata(), R"({"step": 2})");
}

TEST_F(CheckpointAtomic, FailedRenameRemovesTheTempFile) {
    // rename() cannot put a file over a non-empty folder, whoever the user is.
    const std::string folder = path("taken");
    fs::create_directories(fs::path(folder) / "inside");
    const std::string msg = errorOf([&] { bigger.commit(folder); });
    const std::string renameFailed = ": checkpoint not saved: cannot rename the temporary file " + path(".taken.trainbench-tmp-");
    EXPECT_EQ(msg.rfind(folder + renameFailed, 0), 0u) << msg;
    EXPECT_NE(msg.find(" over it: Is a directory"), std::string::npos) << msg;
    EXPECT_EQ(files(), (std::vector<std::string>{"run.ckpt", "taken"}));
}

TEST_F(CheckpointAtomic, MissingFolderIsNamed) {
    const std::string p = path("no/such/run.ckpt");
    const std::string msg = errorOf([&] { bigger.commit(p); });
    EXPECT_EQ(msg, p + ": checkpoint not saved: cannot open the folder " + path("no/such") + ": No such file or directory");
}

}  // namespace
}  // namespace trainbench::engine
