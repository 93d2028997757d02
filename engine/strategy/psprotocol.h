#pragma once
// What the three roles of a parameter_server job say to each other, on framing.h's frames:
//
//   coordinator (in the chief)  --Init, GetState, Pull, Heartbeat, Shutdown-->  parameter server k
//   coordinator                 --JobLayout, Task, Heartbeat, Shutdown------->  worker w
//   worker w                    --Result, Heartbeat, PsLost, Error----------->  coordinator
//   worker w                    --Pull, Push--------------------------------->  parameter server k
//
// Every connection opens with Hello (the job's token, the caller's role and index); a server answers
// Welcome, or Error and closes. Error ("why I close this connection") may be sent by either side at
// any time. The coordinator and the workers send each other a Heartbeat when they have had nothing
// else to say for JobLayout::heartbeat_ms, and the coordinator sends the parameter servers one as
// often: a peer silent for the job's timeout is stopped, hung or cut off, and is given up on. The parameters are one flat buffer (the model's); a parameter server holds some of its
// variables (spans), packed one after the other in offset order: its shard.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/net/framing.h"

namespace trainbench::engine::ps {

enum MessageType : uint16_t {
    kHello = 1,       // client -> server: token, role, index
    kWelcome = 2,     // server -> client: the server's role and index
    kError = 3,       // either way: why the sender closes the connection
    kInit = 4,        // coordinator -> ps: the shard, its values and optimizer state
    kInitDone = 5,    // ps -> coordinator
    kPull = 6,        // worker or coordinator -> ps: the current values, please
    kParams = 7,      // ps -> puller: version and values of the shard
    kPush = 8,        // worker -> ps: the gradient of the shard for one step
    kPushed = 9,      // ps -> worker: applied; staleness and the new version
    kGetState = 10,   // coordinator -> ps: values and optimizer state, for a checkpoint
    kState = 11,      // ps -> coordinator
    kShutdown = 12,   // coordinator -> ps or worker: the job is over, exit
    kJobLayout = 13,  // coordinator -> worker (after Welcome): model shape and where the shards are
    kTask = 14,       // coordinator -> worker: train one step on this batch
    kResult = 15,     // worker -> coordinator: the step is pushed
    kHeartbeat = 16,  // worker <-> coordinator, coordinator -> ps: still alive (while computing, too)
    kPsLost = 17,     // worker -> coordinator: a parameter server failed under it
};
inline constexpr uint16_t kLastType = kPsLost;

// "Hello", "Push", ... ; "type 40" for others.
std::string messageName(uint16_t type);

// A job's token is at most this long (the launcher's are 32 hex digits). Until a peer has said Hello,
// a server reads no frame longer than a Hello with such a token from it.
inline constexpr uint32_t kMaxTokenBytes = 1024;
inline constexpr uint64_t kMaxHelloPayload = 4 + kMaxTokenBytes + 4 + 4;

enum class Role : uint32_t { Coordinator = 1, Worker = 2, ParameterServer = 3 };
std::string roleName(Role role);  // "coordinator", "worker", "parameter server"

// [offset, offset + count) of the flat parameter buffer.
struct Span {
    int64_t offset = 0;
    int64_t count = 0;
    bool operator==(const Span&) const = default;
};

// Places variables on `servers` parameter servers, round-robin by size as TensorFlow's placement
// balances bytes: largest variable first, each to the server holding the fewest values so far
// (ties to the lower index). Each server's spans come back in offset order. servers >= 1.
std::vector<std::vector<Span>> shardVariables(const std::vector<Span>& variables, int servers);
int64_t shardSize(const std::vector<Span>& shard);
// Between the flat buffer and a shard's packed values.
void gather(const float* flat, const std::vector<Span>& shard, float* packed);
void scatter(const float* packed, const std::vector<Span>& shard, float* flat);

// One named part of an optimizer's state (Optimizer::state()), for the shard's values only.
struct StateBlock {
    std::string name;
    std::vector<float> values;
};

// Messages. Each has encode() (a whole frame's bytes) and decode(frame), which throws ProtocolError
// naming the message and field for a payload that does not parse (short, overlong, bad counts).

struct Hello {
    std::string token;
    Role role = Role::Worker;
    uint32_t index = 0;  // the worker's or server's index in the cluster spec; 0 for the coordinator
    std::string encode() const;
    static Hello decode(const framing::Frame& f);
};

struct Welcome {
    Role role = Role::ParameterServer;  // the server's
    uint32_t index = 0;
    std::string encode() const;
    static Welcome decode(const framing::Frame& f);
};

struct ErrorMessage {
    std::string message;
    std::string encode() const;
    static ErrorMessage decode(const framing::Frame& f);
};

struct Init {
    uint32_t server = 0;      // the index the coordinator believes it talks to
    int64_t base_step = 0;    // steps already applied (a resumed run): the first update is step base_step + 1
    std::vector<Span> spans;  // the shard, in offset order
    std::vector<float> values;       // shardSize(spans)
    std::vector<StateBlock> state;   // optimizer state, each shardSize(spans) values; empty: fresh
    std::string encode() const;
    static Init decode(const framing::Frame& f);
};

struct InitDone {
    uint64_t version = 0;
    std::string encode() const;
    static InitDone decode(const framing::Frame& f);
};

struct Pull {
    int64_t step = 0;  // the step the values are for (0: the coordinator's own pull)
    std::string encode() const;
    static Pull decode(const framing::Frame& f);
};

struct Params {
    uint64_t version = 0;  // updates applied to the shard so far (since Init)
    std::vector<float> values;
    std::string encode() const;
    // The frame straight from a server's shard (no copy into a Params first).
    static std::string encode(uint64_t version, const float* values, uint64_t count);
    static Params decode(const framing::Frame& f);
};

struct Push {
    int64_t step = 0;
    uint64_t pulled_version = 0;  // the version of the values the gradient was computed on
    uint32_t worker = 0;
    std::vector<float> gradient;  // shardSize values, packed like the shard
    std::string encode() const;
    static Push decode(const framing::Frame& f);
};

struct Pushed {
    uint64_t version = 0;    // the shard's version after this update
    uint64_t staleness = 0;  // updates applied between the pull and this push
    std::string encode() const;
    static Pushed decode(const framing::Frame& f);
};

struct GetState {
    std::string encode() const;
    static GetState decode(const framing::Frame& f);
};

struct State {
    uint64_t version = 0;
    std::vector<float> values;
    std::vector<StateBlock> state;
    std::string encode() const;
    static State decode(const framing::Frame& f);
};

struct Shutdown {
    std::string encode() const;
    static Shutdown decode(const framing::Frame& f);
};

struct JobLayout {
    int64_t channels = 0, height = 0, width = 0;  // one example
    int64_t classes = 0;
    int64_t param_count = 0;          // the flat buffer's size: the worker's model must match
    int64_t heartbeat_ms = 1000;      // how often the worker says it is alive
    std::vector<std::string> servers; // host:port of each parameter server, by index
    std::vector<std::vector<Span>> shards;  // one per server
    std::string encode() const;
    static JobLayout decode(const framing::Frame& f);
};

struct Task {
    int64_t step = 0;
    uint32_t attempt = 0;     // 0 the first time; n after n reschedulings
    uint64_t seed = 0;        // dropout seed of the step
    int64_t rows = 0;
    std::vector<float> x;     // rows * example size
    std::vector<int32_t> y;   // rows labels
    std::string encode() const;
    // The payload straight from a batch (no copy into vectors first).
    static std::string encode(int64_t step, uint32_t attempt, uint64_t seed, int64_t rows, const float* x,
                              int64_t exampleSize, const int32_t* y);
    static Task decode(const framing::Frame& f);
};

struct Result {
    int64_t step = 0;
    uint32_t attempt = 0;
    double loss = 0.0;            // mean over the rows
    int64_t samples = 0;
    double compute_seconds = 0.0; // forward, loss, backward on the worker
    double pull_seconds = 0.0;    // pulling every shard
    double push_seconds = 0.0;    // pushing every shard, until each server applied it
    std::vector<uint64_t> staleness;  // per server, from its Pushed
    std::string encode() const;
    static Result decode(const framing::Frame& f);
};

struct Heartbeat {
    std::string encode() const;
    static Heartbeat decode(const framing::Frame& f);
};

struct PsLost {
    uint32_t server = 0;
    int64_t step = 0;
    std::string message;  // what failed, from the worker's side
    std::string encode() const;
    static PsLost decode(const framing::Frame& f);
};

}  // namespace trainbench::engine::ps
