#pragma once
// Errors the engine raises for bad input or a failed peer. Messages say what was wrong and where
// (file, byte offset, layer, step, rank) so the CLI can print them as they are.
#include <stdexcept>
#include <string>

namespace trainbench::engine {

// Unreadable or malformed data files (IDX headers, truncated gzip streams, ...).
class DataError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A checkpoint that cannot be written, is damaged, or does not fit the model or optimizer it is
// restored into. A DataError, so callers that report bad input files report these too.
class CheckpointError : public DataError {
public:
    using DataError::DataError;
};

// An output file that could not be written (engine/io/atomicfilewriter.h): the message names the
// file, the failing step and the system's reason ("disk full" when it is). A DataError, as the
// checkpoint and TFRecord errors that report failed writes have always been.
class FileWriteError : public DataError {
public:
    using DataError::DataError;
};

// The rendezvous store of a multi-worker job: unreachable, refused (wrong job token), timed out,
// or a reply that breaks the protocol. Messages name the store's host:port and the keys involved.
class RendezvousError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A collective operation between processes that failed (a peer died, the network broke, a timeout).
// Messages name this rank, the group size and the operation.
class CollectiveError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A message on a trainbench connection that breaks the protocol: bad magic, another version, an
// unknown type, a length over the cap, a truncated frame or payload. The connection is closed.
// Messages say what was wrong and at which byte offset of the stream.
class ProtocolError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A peer of a multi-process job that went away or fell silent: the connection closed or reset, or
// nothing arrived within the timeout. Messages name the peer (role, index, host:port) and what was
// being done.
class ConnectionError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A model that cannot be built for its input (e.g. a kernel larger than the image).
class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace trainbench::engine
