// The messages of the parameter-server protocol: each round-trips through its frame; a payload that
// is short, overlong or lies about its counts is refused naming the message and the field; the
// variables are placed on servers by size and gather/scatter move a shard in and out of the flat
// buffer.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/strategy/psprotocol.h"
#include "engine/util/errors.h"
#include "pstestutil.h"

namespace trainbench::engine::ps {
namespace {

using framing::Frame;
using test::errorOf;

// The one frame `bytes` holds, through the stream decoder as a receiver would get it.
Frame frameOf(const std::string& bytes) {
    framing::FrameDecoder d;
    std::vector<Frame> out;
    d.feed(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), out);
    d.finish();
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? Frame{} : out.front();
}

template <class M>
M roundTrip(const M& m) {
    return M::decode(frameOf(m.encode()));
}

Init sampleInit() {
    Init m;
    m.server = 2;
    m.base_step = 41;
    m.spans = {{0, 2}, {10, 1}};
    m.values = {1.5f, -2.0f, 0.25f};
    m.state = {{"adam.m", {0.1f, 0.2f, 0.3f}}, {"adam.v", {1.0f, 2.0f, 3.0f}}};
    return m;
}

JobLayout sampleLayout() {
    JobLayout m;
    m.channels = 1, m.height = 28, m.width = 28, m.classes = 10, m.param_count = 7850, m.heartbeat_ms = 250;
    m.servers = {"127.0.0.1:4001", "[::1]:4002"};
    m.shards = {{{0, 7840}}, {{7840, 10}}};
    return m;
}

Task sampleTask() {
    Task m;
    m.step = 9, m.attempt = 1, m.seed = 0xfeedull, m.rows = 2;
    m.x = {0.0f, 0.5f, 1.0f, -1.0f, 2.0f, 3.0f};
    m.y = {4, 7};
    return m;
}

TEST(PsProtocol, EveryMessageRoundTrips) {
    const Hello h = roundTrip(Hello{"token", Role::Coordinator, 3});
    EXPECT_EQ(h.token, "token");
    EXPECT_EQ(h.role, Role::Coordinator);
    EXPECT_EQ(h.index, 3u);
    const Welcome w = roundTrip(Welcome{Role::ParameterServer, 5});
    EXPECT_EQ(w.role, Role::ParameterServer);
    EXPECT_EQ(w.index, 5u);
    EXPECT_EQ(roundTrip(ErrorMessage{"wrong job token"}).message, "wrong job token");

    const Init init = roundTrip(sampleInit());
    EXPECT_EQ(init.server, 2u);
    EXPECT_EQ(init.base_step, 41);
    EXPECT_EQ(init.spans, sampleInit().spans);
    EXPECT_EQ(init.values, sampleInit().values);
    ASSERT_EQ(init.state.size(), 2u);
    EXPECT_EQ(init.state[1].name, "adam.v");
    EXPECT_EQ(init.state[1].values, sampleInit().state[1].values);

    EXPECT_EQ(roundTrip(InitDone{7}).version, 7u);
    EXPECT_EQ(roundTrip(Pull{12}).step, 12);
    const Params p = roundTrip(Params{3, {1.0f, -0.0f, 3e-38f}});
    EXPECT_EQ(p.version, 3u);
    test::expectSameBits(p.values, {1.0f, -0.0f, 3e-38f}, "Params values");
    EXPECT_EQ(Params::encode(3, p.values.data(), p.values.size()), p.encode());
    const Push push = roundTrip(Push{12, 4, 1, {0.5f, -0.5f}});
    EXPECT_EQ(push.step, 12);
    EXPECT_EQ(push.pulled_version, 4u);
    EXPECT_EQ(push.worker, 1u);
    EXPECT_EQ(push.gradient, (std::vector<float>{0.5f, -0.5f}));
    const Pushed pushed = roundTrip(Pushed{5, 1});
    EXPECT_EQ(pushed.version, 5u);
    EXPECT_EQ(pushed.staleness, 1u);
    roundTrip(GetState{});
    const State s = roundTrip(State{9, {1.0f, 2.0f}, {{"sgd.momentum", {0.1f, 0.2f}}}});
    EXPECT_EQ(s.version, 9u);
    EXPECT_EQ(s.values, (std::vector<float>{1.0f, 2.0f}));
    ASSERT_EQ(s.state.size(), 1u);
    EXPECT_EQ(s.state[0].name, "sgd.momentum");
    roundTrip(Shutdown{});

    const JobLayout l = roundTrip(sampleLayout());
    EXPECT_EQ(l.channels, 1);
    EXPECT_EQ(l.width, 28);
    EXPECT_EQ(l.classes, 10);
    EXPECT_EQ(l.param_count, 7850);
    EXPECT_EQ(l.heartbeat_ms, 250);
    EXPECT_EQ(l.servers, sampleLayout().servers);
    EXPECT_EQ(l.shards, sampleLayout().shards);

    const Task t = roundTrip(sampleTask());
    EXPECT_EQ(t.step, 9);
    EXPECT_EQ(t.attempt, 1u);
    EXPECT_EQ(t.seed, 0xfeedull);
    EXPECT_EQ(t.rows, 2);
    EXPECT_EQ(t.x, sampleTask().x);
    EXPECT_EQ(t.y, sampleTask().y);
    const Task& st = sampleTask();
    EXPECT_EQ(Task::encode(st.step, st.attempt, st.seed, st.rows, st.x.data(), 3, st.y.data()), st.encode());

    const Result r = roundTrip(Result{9, 1, 2.302585, 64, 0.5, 0.25, 0.125, {0, 3}});
    EXPECT_EQ(r.step, 9);
    EXPECT_EQ(r.attempt, 1u);
    EXPECT_EQ(r.loss, 2.302585);
    EXPECT_EQ(r.samples, 64);
    EXPECT_EQ(r.compute_seconds, 0.5);
    EXPECT_EQ(r.pull_seconds, 0.25);
    EXPECT_EQ(r.push_seconds, 0.125);
    EXPECT_EQ(r.staleness, (std::vector<uint64_t>{0, 3}));
    roundTrip(Heartbeat{});
    const PsLost lost = roundTrip(PsLost{1, 17, "parameter server 1 at 127.0.0.1:4002: connection closed by the peer"});
    EXPECT_EQ(lost.server, 1u);
    EXPECT_EQ(lost.step, 17);
    EXPECT_EQ(lost.message, "parameter server 1 at 127.0.0.1:4002: connection closed by the peer");
}

// Every message, encoded, and its decode as a function of a frame.
struct Sample {
    const char* name;
    std::string bytes;
    std::function<void(const Frame&)> decode;
};

std::vector<Sample> samples() {
    return {
        {"Hello", Hello{"token", Role::Worker, 1}.encode(), [](const Frame& f) { Hello::decode(f); }},
        {"Welcome", Welcome{Role::ParameterServer, 1}.encode(), [](const Frame& f) { Welcome::decode(f); }},
        {"Error", ErrorMessage{"why"}.encode(), [](const Frame& f) { ErrorMessage::decode(f); }},
        {"Init", sampleInit().encode(), [](const Frame& f) { Init::decode(f); }},
        {"InitDone", InitDone{1}.encode(), [](const Frame& f) { InitDone::decode(f); }},
        {"Pull", Pull{1}.encode(), [](const Frame& f) { Pull::decode(f); }},
        {"Params", Params{1, {1.0f}}.encode(), [](const Frame& f) { Params::decode(f); }},
        {"Push", Push{1, 0, 0, {1.0f}}.encode(), [](const Frame& f) { Push::decode(f); }},
        {"Pushed", Pushed{1, 0}.encode(), [](const Frame& f) { Pushed::decode(f); }},
        {"GetState", GetState{}.encode(), [](const Frame& f) { GetState::decode(f); }},
        {"State", State{1, {1.0f}, {{"adam.m", {0.5f}}}}.encode(), [](const Frame& f) { State::decode(f); }},
        {"Shutdown", Shutdown{}.encode(), [](const Frame& f) { Shutdown::decode(f); }},
        {"JobLayout", sampleLayout().encode(), [](const Frame& f) { JobLayout::decode(f); }},
        {"Task", sampleTask().encode(), [](const Frame& f) { Task::decode(f); }},
        {"Result", Result{1, 0, 0.5, 2, 0, 0, 0, {1}}.encode(), [](const Frame& f) { Result::decode(f); }},
        {"Heartbeat", Heartbeat{}.encode(), [](const Frame& f) { Heartbeat::decode(f); }},
        {"PsLost", PsLost{0, 1, "gone"}.encode(), [](const Frame& f) { PsLost::decode(f); }},
    };
}

TEST(PsProtocol, TruncatedPayloadsAndTrailingBytesAreRefusedNamingTheMessage) {
    for (const Sample& s : samples()) {
        const Frame whole = frameOf(s.bytes);
        EXPECT_EQ(messageName(whole.type), s.name);
        for (size_t cut = 0; cut < whole.payload.size(); ++cut) {
            Frame shorter{whole.type, std::vector<uint8_t>(whole.payload.begin(), whole.payload.begin() + static_cast<long>(cut))};
            const std::string e = errorOf<ProtocolError>([&] { s.decode(shorter); });
            EXPECT_EQ(e.rfind(std::string(s.name) + " message", 0), 0u) << s.name << " cut to " << cut << ": " << e;
        }
        Frame longer = whole;
        longer.payload.push_back(0);
        EXPECT_EQ(errorOf<ProtocolError>([&] { s.decode(longer); }),
                  std::string(s.name) + " message: 1 unexpected bytes after its fields");
    }
}

TEST(PsProtocol, DecodeRefusesAnotherMessageType) {
    EXPECT_EQ(errorOf<ProtocolError>([] { Params::decode(frameOf(Pull{1}.encode())); }),
              "expected a Params message, got Pull");
    EXPECT_EQ(errorOf<ProtocolError>([] { Hello::decode(Frame{40, {}}); }), "expected a Hello message, got type 40");
}

// A payload whose fields are written by hand: what a broken or hostile peer could send.
Frame handMade(uint16_t type, const framing::PayloadWriter& w) {
    return Frame{type, std::vector<uint8_t>(w.data().begin(), w.data().end())};
}

TEST(PsProtocol, CountsLargerThanThePayloadAreRefusedBeforeAllocating) {
    framing::PayloadWriter params;
    params.u64(1).u64(uint64_t{1} << 40).u32(0);  // says 2^40 floats, holds 4 bytes
    EXPECT_EQ(errorOf<ProtocolError>([&] { Params::decode(handMade(kParams, params)); }),
              "Params message: field 'values' says 1099511627776 floats, 4 bytes are left");

    framing::PayloadWriter spans;
    spans.u32(0).u64(0).u32(0xFFFFFFFFu);
    EXPECT_EQ(errorOf<ProtocolError>([&] { Init::decode(handMade(kInit, spans)); }),
              "Init message: 4294967295 spans, more than 1048576");

    framing::PayloadWriter init;  // one span of 2^40 values, then a values count that says so, and no values
    init.u32(0).u64(0).u32(1).u64(0).u64(uint64_t{1} << 40).u64(uint64_t{1} << 40);
    EXPECT_EQ(errorOf<ProtocolError>([&] { Init::decode(handMade(kInit, init)); }),
              "Init message: field 'values' says 1099511627776 floats, 0 bytes are left");

    framing::PayloadWriter state;  // values for the 3 values of the spans, state blocks of 2
    const float three[] = {1, 2, 3};
    state.u32(0).u64(0).u32(1).u64(0).u64(3).floats(three, 3).u32(1).str("adam.m").floats(three, 2);
    EXPECT_EQ(errorOf<ProtocolError>([&] { Init::decode(handMade(kInit, state)); }),
              "Init message: field 'state values' has 2 values, 3 expected");

    framing::PayloadWriter blocks;
    blocks.u64(1).floats(three, 1).u32(1000);
    EXPECT_EQ(errorOf<ProtocolError>([&] { State::decode(handMade(kState, blocks)); }),
              "State message: 1000 optimizer state blocks, more than 16");

    framing::PayloadWriter result;
    result.u64(1).u32(0).f64(0.5).u64(2).f64(0).f64(0).f64(0).u32(4000);  // 4000 servers' staleness, none there
    EXPECT_EQ(errorOf<ProtocolError>([&] { Result::decode(handMade(kResult, result)); }),
              "Result message: field 'staleness' needs 8 bytes, 0 are left");

    framing::PayloadWriter task;
    const int32_t labels[] = {1, 2, 3};
    task.u64(1).u32(0).u64(0).u64(2).floats(three, 2).int32s(labels, 3);
    EXPECT_EQ(errorOf<ProtocolError>([&] { Task::decode(handMade(kTask, task)); }),
              "Task message: field 'labels' has 3 values, 2 expected");
}

TEST(PsProtocol, FieldsOutOfRangeAreRefusedNamingTheField) {
    framing::PayloadWriter role;
    role.str("token").u32(7).u32(0);
    EXPECT_EQ(errorOf<ProtocolError>([&] { Hello::decode(handMade(kHello, role)); }), "Hello message: unknown role 7");

    framing::PayloadWriter order;  // spans out of order
    order.u32(0).u64(0).u32(2).u64(10).u64(5).u64(12).u64(1);
    EXPECT_EQ(errorOf<ProtocolError>([&] { Init::decode(handMade(kInit, order)); }),
              "Init message: span 1 [12, +1) is out of order or out of range");

    JobLayout none = sampleLayout();
    none.servers.clear();
    EXPECT_EQ(errorOf<ProtocolError>([&] { JobLayout::decode(frameOf(none.encode())); }),
              "JobLayout message: 0 parameter servers (1 to 4096 expected)");

    Task ragged = sampleTask();
    ragged.x.push_back(1.0f);  // 7 values in 2 rows
    framing::PayloadWriter w;
    w.u64(1).u32(0).u64(0).u64(2).floats(ragged.x.data(), ragged.x.size()).int32s(ragged.y.data(), 2);
    EXPECT_EQ(errorOf<ProtocolError>([&] { Task::decode(handMade(kTask, w)); }),
              "Task message: 7 example values do not divide into 2 rows");
}

TEST(PsProtocol, NamesOfMessagesAndRoles) {
    EXPECT_EQ(messageName(kPush), "Push");
    EXPECT_EQ(messageName(kPsLost), "PsLost");
    EXPECT_EQ(messageName(40), "type 40");
    EXPECT_EQ(roleName(Role::ParameterServer), "parameter server");
}

TEST(PsProtocol, VariablesGoLargestFirstToTheLeastLoadedServer) {
    // Sizes 10, 100, 30, 60, 5 at consecutive offsets.
    const std::vector<Span> vars = {{0, 10}, {10, 100}, {110, 30}, {140, 60}, {200, 5}};
    // 100 -> server 0; 60 -> 1; 30 -> 1 (60 < 100); 10 -> 1 (90 < 100); 5 -> 0 (a tie at 100: the lower index).
    const auto shards = shardVariables(vars, 2);
    ASSERT_EQ(shards.size(), 2u);
    EXPECT_EQ(shards[0], (std::vector<Span>{{10, 100}, {200, 5}}));
    EXPECT_EQ(shards[1], (std::vector<Span>{{0, 10}, {110, 30}, {140, 60}}));  // in offset order
    EXPECT_EQ(shardSize(shards[0]), 105);
    EXPECT_EQ(shardSize(shards[1]), 100);

    const auto one = shardVariables(vars, 1);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0], vars);
    const auto many = shardVariables({{0, 3}}, 3);  // more servers than variables: some hold nothing
    EXPECT_EQ(many[0], (std::vector<Span>{{0, 3}}));
    EXPECT_TRUE(many[1].empty());
    EXPECT_TRUE(many[2].empty());
}

TEST(PsProtocol, GatherAndScatterAreInverse) {
    const std::vector<Span> vars = {{0, 10}, {10, 100}, {110, 30}, {140, 60}, {200, 5}};
    const std::vector<float> flat = test::testValues(205, 3);
    std::vector<float> back(flat.size(), 0.0f);
    for (const auto& shard : shardVariables(vars, 3)) {
        std::vector<float> packed(static_cast<size_t>(shardSize(shard)));
        gather(flat.data(), shard, packed.data());
        // Packed in offset order, one span after the other.
        size_t at = 0;
        for (const Span& s : shard)
            for (int64_t i = 0; i < s.count; ++i) EXPECT_EQ(packed[at++], flat[static_cast<size_t>(s.offset + i)]);
        scatter(packed.data(), shard, back.data());
    }
    EXPECT_EQ(back, flat);
}

}  // namespace
}  // namespace trainbench::engine::ps
