#pragma once
// Reading a whole input file whose size has a limit (an experiment file, a device catalog): the
// size is checked before anything is read or allocated, and again while reading, for files whose
// size is not known in advance (a pipe, /proc).
#include <cstddef>
#include <optional>
#include <string>

namespace trainbench::engine {

// The file's bytes, or nullopt with *error saying why not, without the path (the caller's error
// type adds it): "cannot open: No such file or directory", "cannot read: Is a directory",
// "is 5000000 bytes, over the limit of 1048576 bytes".
std::optional<std::string> readCappedFile(const std::string& path, std::size_t maxBytes, std::string* error);

}  // namespace trainbench::engine
