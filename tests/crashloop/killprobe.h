#pragma once
// Kills a run process with SIGKILL and says what it was doing at that moment. The process is
// stopped first (SIGSTOP, every thread), so that what is seen from outside is the state the kill
// hits: a checkpoint's temporary file open (a checkpoint being written), the store's WAL write lock
// held (a batch being committed) or its checkpoint lock (the WAL being copied into the database).
#include <string>
#include <sys/types.h>

namespace trainbench::crashloop {

struct KillProbe {
    bool exited = false;            // gone (or a zombie) before it could be stopped: nothing was killed
    bool checkpointWrite = false;   // had "<checkpoint>.tmp.*" open
    bool storeCommit = false;       // held the store's WAL write lock (inside a write transaction)
    bool storeWalCheckpoint = false;  // held the WAL checkpoint lock

    // "exited", or the observations joined by '+' ("checkpoint+store-commit"), or "-" for none.
    std::string text() const;
};

// What to wait for before the kill: nothing (kill now), or a moment inside a store commit or a
// checkpoint write, looked for by stopping the process every 0-2 ms for up to 10 s (then it is
// killed wherever it is). Random delays alone seldom land in a commit: it takes a millisecond.
enum class Aim { Anything, StoreCommit, CheckpointWrite };

KillProbe stopProbeAndKill(pid_t pid, const std::string& db, const std::string& checkpoint, Aim aim = Aim::Anything);

}  // namespace trainbench::crashloop
