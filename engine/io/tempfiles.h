#pragma once
// The temporary files of AtomicFileWriter that have a name (engine/io/atomicfilewriter.h): how they
// are named, and how the ones a killed process left behind are found and removed.
//
// A name is "." + the target's name (its first 200 bytes) + ".trainbench-tmp-<pid>-<n>": hidden, so globs such
// as "train-*.tfrecord" never match it, and unique per process by the counter. Every writer holds
// an flock() on its file for as long as it has it open; a file is stale when the pid in its name is
// not a live process here and nobody holds the lock (a writer on another host or in another pid
// namespace still does).
#include <sys/types.h>

#include <string>
#include <string_view>

namespace trainbench::engine {

// A fresh temporary name for a file called `name`, in this process.
std::string tempFileName(std::string_view name);

// Whether `entry` is such a name; its pid goes to *pid.
bool isTempFileName(std::string_view entry, pid_t* pid);

// Removes the stale temporary files in `folder`, open as `dirFd`. Done once per process and folder
// (the first write there: a folder is the same when its path, device and inode are); best effort: a
// file that cannot be checked or removed stays.
void sweepStaleTempFiles(int dirFd, const std::string& folder);

}  // namespace trainbench::engine
