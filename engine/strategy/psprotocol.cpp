#include "engine/strategy/psprotocol.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "engine/util/errors.h"

namespace trainbench::engine::ps {

using framing::Frame;
using framing::PayloadReader;
using framing::PayloadWriter;

namespace {

constexpr uint32_t kMaxText = 64 * 1024;       // tokens, addresses, error messages
constexpr uint32_t kMaxSpans = 1u << 20;       // variables per shard
constexpr uint32_t kMaxServers = 4096;
constexpr uint32_t kMaxStateBlocks = 16;

// Checks the frame's type before its payload is read.
PayloadReader reader(const Frame& f, uint16_t type) {
    if (f.type != type)
        throw ProtocolError("expected a " + messageName(type) + " message, got " + messageName(f.type));
    return PayloadReader(f, messageName(type).c_str());  // the reader keeps its own copy of the name
}

std::string frame(uint16_t type, const PayloadWriter& w) { return framing::encode(type, w.data()); }

void writeSpans(PayloadWriter& w, const std::vector<Span>& spans) {
    w.u32(static_cast<uint32_t>(spans.size()));
    for (const Span& s : spans) w.u64(static_cast<uint64_t>(s.offset)).u64(static_cast<uint64_t>(s.count));
}

std::vector<Span> readSpans(PayloadReader& r, const std::string& message) {
    const uint32_t n = r.u32("number of spans");
    if (n > kMaxSpans)
        throw ProtocolError(message + " message: " + std::to_string(n) + " spans, more than " + std::to_string(kMaxSpans));
    std::vector<Span> spans;
    spans.reserve(std::min<uint32_t>(n, 1024));
    int64_t end = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t offset = r.u64("span offset"), count = r.u64("span count");
        // Offsets in order and non-overlapping, values that fit an int64 sum.
        if (offset > (uint64_t{1} << 48) || count > (uint64_t{1} << 48) || static_cast<int64_t>(offset) < end)
            throw ProtocolError(message + " message: span " + std::to_string(i) + " [" + std::to_string(offset) + ", +" +
                                std::to_string(count) + ") is out of order or out of range");
        spans.push_back({static_cast<int64_t>(offset), static_cast<int64_t>(count)});
        end = static_cast<int64_t>(offset + count);
    }
    return spans;
}

void writeState(PayloadWriter& w, const std::vector<StateBlock>& state) {
    w.u32(static_cast<uint32_t>(state.size()));
    for (const StateBlock& b : state) w.str(b.name).floats(b.values.data(), b.values.size());
}

std::vector<StateBlock> readState(PayloadReader& r, const std::string& message, int64_t expected) {
    const uint32_t n = r.u32("state blocks");
    if (n > kMaxStateBlocks)
        throw ProtocolError(message + " message: " + std::to_string(n) + " optimizer state blocks, more than " +
                            std::to_string(kMaxStateBlocks));
    std::vector<StateBlock> out(n);
    for (StateBlock& b : out) {
        b.name = r.str("state name", 256);
        r.floats("state values", b.values, expected);
    }
    return out;
}

Role roleFrom(uint32_t v, const std::string& message) {
    if (v < 1 || v > 3) throw ProtocolError(message + " message: unknown role " + std::to_string(v));
    return static_cast<Role>(v);
}

}  // namespace

std::string messageName(uint16_t type) {
    static const char* const names[] = {"",         "Hello",    "Welcome", "Error",    "Init",     "InitDone",
                                        "Pull",     "Params",   "Push",    "Pushed",   "GetState", "State",
                                        "Shutdown", "JobLayout", "Task",   "Result",   "Heartbeat", "PsLost"};
    if (type >= 1 && type <= kLastType) return names[type];
    return "type " + std::to_string(type);
}

std::string roleName(Role role) {
    switch (role) {
        case Role::Coordinator: return "coordinator";
        case Role::Worker: return "worker";
        case Role::ParameterServer: return "parameter server";
    }
    return "role " + std::to_string(static_cast<uint32_t>(role));
}

std::vector<std::vector<Span>> shardVariables(const std::vector<Span>& variables, int servers) {
    std::vector<std::vector<Span>> shards(static_cast<size_t>(std::max(servers, 1)));
    std::vector<size_t> order(variables.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return variables[a].count > variables[b].count; });
    std::vector<int64_t> load(shards.size(), 0);
    for (size_t v : order) {
        const size_t k = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        shards[k].push_back(variables[v]);
        load[k] += variables[v].count;
    }
    for (auto& s : shards) std::sort(s.begin(), s.end(), [](const Span& a, const Span& b) { return a.offset < b.offset; });
    return shards;
}

int64_t shardSize(const std::vector<Span>& shard) {
    int64_t n = 0;
    for (const Span& s : shard) n += s.count;
    return n;
}

void gather(const float* flat, const std::vector<Span>& shard, float* packed) {
    for (const Span& s : shard) {
        std::memcpy(packed, flat + s.offset, static_cast<size_t>(s.count) * sizeof(float));
        packed += s.count;
    }
}

void scatter(const float* packed, const std::vector<Span>& shard, float* flat) {
    for (const Span& s : shard) {
        std::memcpy(flat + s.offset, packed, static_cast<size_t>(s.count) * sizeof(float));
        packed += s.count;
    }
}

std::string Hello::encode() const {
    PayloadWriter w;
    w.str(token).u32(static_cast<uint32_t>(role)).u32(index);
    return frame(kHello, w);
}
Hello Hello::decode(const Frame& f) {
    PayloadReader r = reader(f, kHello);
    Hello h;
    h.token = r.str("token", kMaxText);
    h.role = roleFrom(r.u32("role"), "Hello");
    h.index = r.u32("index");
    r.end();
    return h;
}

std::string Welcome::encode() const {
    PayloadWriter w;
    w.u32(static_cast<uint32_t>(role)).u32(index);
    return frame(kWelcome, w);
}
Welcome Welcome::decode(const Frame& f) {
    PayloadReader r = reader(f, kWelcome);
    Welcome m;
    m.role = roleFrom(r.u32("role"), "Welcome");
    m.index = r.u32("index");
    r.end();
    return m;
}

std::string ErrorMessage::encode() const {
    PayloadWriter w;
    w.str(message.size() > kMaxText ? message.substr(0, kMaxText) : message);
    return frame(kError, w);
}
ErrorMessage ErrorMessage::decode(const Frame& f) {
    PayloadReader r = reader(f, kError);
    ErrorMessage m;
    m.message = r.str("message", kMaxText);
    r.end();
    return m;
}

std::string Init::encode() const {
    PayloadWriter w;
    w.u32(server).u64(static_cast<uint64_t>(base_step));
    writeSpans(w, spans);
    w.floats(values.data(), values.size());
    writeState(w, state);
    return frame(kInit, w);
}
Init Init::decode(const Frame& f) {
    PayloadReader r = reader(f, kInit);
    Init m;
    m.server = r.u32("server");
    const uint64_t base = r.u64("base step");
    if (base > (uint64_t{1} << 62)) throw ProtocolError("Init message: base step " + std::to_string(base) + " is out of range");
    m.base_step = static_cast<int64_t>(base);
    m.spans = readSpans(r, "Init");
    const int64_t size = shardSize(m.spans);
    r.floats("values", m.values, size);
    m.state = readState(r, "Init", size);
    r.end();
    return m;
}

std::string InitDone::encode() const {
    PayloadWriter w;
    w.u64(version);
    return frame(kInitDone, w);
}
InitDone InitDone::decode(const Frame& f) {
    PayloadReader r = reader(f, kInitDone);
    InitDone m;
    m.version = r.u64("version");
    r.end();
    return m;
}

std::string Pull::encode() const {
    PayloadWriter w;
    w.u64(static_cast<uint64_t>(step));
    return frame(kPull, w);
}
Pull Pull::decode(const Frame& f) {
    PayloadReader r = reader(f, kPull);
    Pull m;
    m.step = static_cast<int64_t>(r.u64("step"));
    r.end();
    return m;
}

std::string Params::encode(uint64_t version, const float* values, uint64_t count) {
    PayloadWriter w;
    w.u64(version).floats(values, count);
    return frame(kParams, w);
}
std::string Params::encode() const { return encode(version, values.data(), values.size()); }
Params Params::decode(const Frame& f) {
    PayloadReader r = reader(f, kParams);
    Params m;
    m.version = r.u64("version");
    r.floats("values", m.values);
    r.end();
    return m;
}

std::string Push::encode() const {
    PayloadWriter w;
    w.u64(static_cast<uint64_t>(step)).u64(pulled_version).u32(worker).floats(gradient.data(), gradient.size());
    return frame(kPush, w);
}
Push Push::decode(const Frame& f) {
    PayloadReader r = reader(f, kPush);
    Push m;
    m.step = static_cast<int64_t>(r.u64("step"));
    m.pulled_version = r.u64("pulled version");
    m.worker = r.u32("worker");
    r.floats("gradient", m.gradient);
    r.end();
    return m;
}

std::string Pushed::encode() const {
    PayloadWriter w;
    w.u64(version).u64(staleness);
    return frame(kPushed, w);
}
Pushed Pushed::decode(const Frame& f) {
    PayloadReader r = reader(f, kPushed);
    Pushed m;
    m.version = r.u64("version");
    m.staleness = r.u64("staleness");
    r.end();
    return m;
}

std::string GetState::encode() const { return frame(kGetState, PayloadWriter{}); }
GetState GetState::decode(const Frame& f) {
    PayloadReader r = reader(f, kGetState);
    r.end();
    return {};
}

std::string State::encode() const {
    PayloadWriter w;
    w.u64(version).floats(values.data(), values.size());
    writeState(w, state);
    return frame(kState, w);
}
State State::decode(const Frame& f) {
    PayloadReader r = reader(f, kState);
    State m;
    m.version = r.u64("version");
    r.floats("values", m.values);
    m.state = readState(r, "State", static_cast<int64_t>(m.values.size()));
    r.end();
    return m;
}

std::string Shutdown::encode() const { return frame(kShutdown, PayloadWriter{}); }
Shutdown Shutdown::decode(const Frame& f) {
    PayloadReader r = reader(f, kShutdown);
    r.end();
    return {};
}

std::string JobLayout::encode() const {
    PayloadWriter w;
    for (int64_t v : {channels, height, width, classes, param_count, heartbeat_ms}) w.u64(static_cast<uint64_t>(v));
    w.u32(static_cast<uint32_t>(servers.size()));
    for (size_t k = 0; k < servers.size(); ++k) {
        w.str(servers[k]);
        writeSpans(w, k < shards.size() ? shards[k] : std::vector<Span>{});
    }
    return frame(kJobLayout, w);
}
JobLayout JobLayout::decode(const Frame& f) {
    PayloadReader r = reader(f, kJobLayout);
    JobLayout m;
    int64_t* fields[] = {&m.channels, &m.height, &m.width, &m.classes, &m.param_count, &m.heartbeat_ms};
    const char* names[] = {"channels", "height", "width", "classes", "parameter count", "heartbeat"};
    for (size_t i = 0; i < 6; ++i) {
        const uint64_t v = r.u64(names[i]);
        if (v > (uint64_t{1} << 40))
            throw ProtocolError(std::string("JobLayout message: ") + names[i] + " " + std::to_string(v) + " is out of range");
        *fields[i] = static_cast<int64_t>(v);
    }
    const uint32_t n = r.u32("server count");
    if (n == 0 || n > kMaxServers)
        throw ProtocolError("JobLayout message: " + std::to_string(n) + " parameter servers (1 to " +
                            std::to_string(kMaxServers) + " expected)");
    for (uint32_t k = 0; k < n; ++k) {
        m.servers.push_back(r.str("server address", kMaxText));
        m.shards.push_back(readSpans(r, "JobLayout"));
    }
    r.end();
    return m;
}

std::string Task::encode(int64_t step, uint32_t attempt, uint64_t seed, int64_t rows, const float* x,
                         int64_t exampleSize, const int32_t* y) {
    PayloadWriter w;
    w.u64(static_cast<uint64_t>(step)).u32(attempt).u64(seed).u64(static_cast<uint64_t>(rows));
    w.floats(x, static_cast<uint64_t>(rows * exampleSize));
    w.int32s(y, static_cast<uint64_t>(rows));
    return frame(kTask, w);
}
std::string Task::encode() const {
    const int64_t exampleSize = rows > 0 ? static_cast<int64_t>(x.size()) / rows : 0;
    return encode(step, attempt, seed, rows, x.data(), exampleSize, y.data());
}
Task Task::decode(const Frame& f) {
    PayloadReader r = reader(f, kTask);
    Task m;
    m.step = static_cast<int64_t>(r.u64("step"));
    m.attempt = r.u32("attempt");
    m.seed = r.u64("seed");
    const uint64_t rows = r.u64("rows");
    if (rows > (uint64_t{1} << 32)) throw ProtocolError("Task message: " + std::to_string(rows) + " rows is out of range");
    m.rows = static_cast<int64_t>(rows);
    r.floats("examples", m.x);
    if (m.rows > 0 ? m.x.size() % static_cast<size_t>(m.rows) != 0 : !m.x.empty())
        throw ProtocolError("Task message: " + std::to_string(m.x.size()) + " example values do not divide into " +
                            std::to_string(m.rows) + " rows");
    r.int32s("labels", m.y, m.rows);
    r.end();
    return m;
}

std::string Result::encode() const {
    PayloadWriter w;
    w.u64(static_cast<uint64_t>(step)).u32(attempt).f64(loss).u64(static_cast<uint64_t>(samples));
    w.f64(compute_seconds).f64(pull_seconds).f64(push_seconds);
    w.u32(static_cast<uint32_t>(staleness.size()));
    for (uint64_t s : staleness) w.u64(s);
    return frame(kResult, w);
}
Result Result::decode(const Frame& f) {
    PayloadReader r = reader(f, kResult);
    Result m;
    m.step = static_cast<int64_t>(r.u64("step"));
    m.attempt = r.u32("attempt");
    m.loss = r.f64("loss");
    m.samples = static_cast<int64_t>(r.u64("samples"));
    m.compute_seconds = r.f64("compute seconds");
    m.pull_seconds = r.f64("pull seconds");
    m.push_seconds = r.f64("push seconds");
    const uint32_t n = r.u32("server count");
    if (n > kMaxServers) throw ProtocolError("Result message: " + std::to_string(n) + " servers, more than " +
                                             std::to_string(kMaxServers));
    for (uint32_t k = 0; k < n; ++k) m.staleness.push_back(r.u64("staleness"));
    r.end();
    return m;
}

std::string Heartbeat::encode() const { return frame(kHeartbeat, PayloadWriter{}); }
Heartbeat Heartbeat::decode(const Frame& f) {
    PayloadReader r = reader(f, kHeartbeat);
    r.end();
    return {};
}

std::string PsLost::encode() const {
    PayloadWriter w;
    w.u32(server).u64(static_cast<uint64_t>(step)).str(message.size() > kMaxText ? message.substr(0, kMaxText) : message);
    return frame(kPsLost, w);
}
PsLost PsLost::decode(const Frame& f) {
    PayloadReader r = reader(f, kPsLost);
    PsLost m;
    m.server = r.u32("server");
    m.step = static_cast<int64_t>(r.u64("step"));
    m.message = r.str("message", kMaxText);
    r.end();
    return m;
}

}  // namespace trainbench::engine::ps
