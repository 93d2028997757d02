// `--trace FILE`: Chrome trace-event JSON of a window of steps, read back with nlohmann::json the
// way a viewer would: the window's events only, zones nested per thread, thread names, counters,
// the cap, merging the files of two ranks, and names that JSON has to escape.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/instrument/instrument.h"
#include "profiler/trace/chrometrace.h"
#include "profiler/trace/jsonout.h"
#include "storetestutil.h"

namespace trainbench::profiler {
namespace {

namespace prof = engine::prof;
using Json = nlohmann::json;
using testutil::TempDir;

void spin(int64_t ns) {
    const int64_t until = prof::nowNs() + ns;
    while (prof::nowNs() < until) {
    }
}

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Json readJson(const std::string& path) {
    const std::string text = readText(path);
    EXPECT_FALSE(text.empty()) << path;
    return Json::parse(text);  // throws (fails the test) if the file is not JSON
}

// Microseconds in the file to integer nanoseconds.
int64_t ns(const Json& micros) { return std::llround(micros.get<double>() * 1000.0); }

std::vector<Json> eventsOf(const Json& doc, const std::string& ph) {
    std::vector<Json> out;
    for (const Json& e : doc["traceEvents"])
        if (e["ph"] == ph) out.push_back(e);
    return out;
}

// The "args.name" of the metadata event `name` ("thread_name", "process_name") per tid.
std::map<int, std::string> metadataNames(const Json& doc, const std::string& name) {
    std::map<int, std::string> out;
    for (const Json& e : eventsOf(doc, "M"))
        if (e["name"] == name) out[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    return out;
}

int tidNamed(const Json& doc, const std::string& threadName) {
    for (const auto& [tid, name] : metadataNames(doc, "thread_name"))
        if (name == threadName) return tid;
    ADD_FAILURE() << "no thread_name metadata for " << threadName;
    return -1;
}

class NullSink : public prof::TraceSink {
public:
    void events(const prof::TraceThread&, std::span<const prof::TraceEvent>) override {}
};

// Tracing is process-wide: each test starts and ends with it off and the engine's buffers empty.
class ChromeTrace : public ::testing::Test {
protected:
    void SetUp() override {
        prof::setTracing(false);
        NullSink discard;
        prof::drainTrace(discard);
    }
    void TearDown() override {
        prof::setTracing(false);
        NullSink discard;
        prof::drainTrace(discard);
    }
    TempDir dir_;
};

// A zone or counter made up for the writer, at times relative to `base`.
prof::TraceEvent zone(const prof::ZoneSite* site, int64_t begin, int64_t end, double value = std::nan("")) {
    return {site, begin, end, value, prof::TraceEvent::Kind::Zone};
}
prof::TraceEvent sample(const prof::ZoneSite* site, int64_t t, double value) {
    return {site, t, t, value, prof::TraceEvent::Kind::Counter};
}

// ---------------------------------------------------------------------------------------------

TEST_F(ChromeTrace, KeepsTheZonesAndCountersOfTheWindowOnTwoThreads) {
    if (!prof::kEnabled) GTEST_SKIP() << "built with TRAINBENCH_PROFILING=OFF";
    static constexpr prof::ZoneSite queueFill{"queue fill", "pipeline"};
    static constexpr prof::ZoneSite loss{"loss", "train"};
    const std::string path = dir_.file("run.trace");
    ChromeTraceWriter trace({.rank = 0, .firstStep = 3, .lastStep = 5});
    std::atomic<bool> stop{false};
    std::atomic<int> decoded{0};
    bool tracingDuringWindow = false, tracingAfterWindow = true;

    std::thread pipeline([&] {
        prof::setThreadName("pipeline read");
        for (int n = 0; !stop; ++n) {
            {
                TB_ZONE("pipeline", "decode");
                {
                    TB_ZONE("pipeline", "read");
                    spin(40'000);
                }
                spin(40'000);
            }
            prof::counter(&queueFill, n % 8);
            ++decoded;
        }
    });
    std::thread trainer([&] {
        prof::setThreadName("trainer");
        for (int64_t step = 1; step <= 10; ++step) {
            trace.beginStep(step);
            if (step == 4) tracingDuringWindow = prof::tracing();
            {
                TB_ZONE_ARG("step", "step", step);
                {
                    TB_ZONE("phase", "forward");
                    spin(300'000);
                }
                {
                    TB_ZONE("phase", "backward");
                    spin(300'000);
                }
                prof::counter(&loss, 1.0 / static_cast<double>(step));
                // Every step sees a whole decode of the pipeline thread (one that began after
                // the one running now), however the two threads are scheduled.
                const int seen = decoded;
                while (decoded < seen + 2) std::this_thread::yield();
            }
            trace.endStep(step);
            prof::drainTrace(trace);
            if (step == 6) tracingAfterWindow = prof::tracing();
        }
    });
    trainer.join();
    stop = true;
    pipeline.join();
    prof::drainTrace(trace);
    trace.write(path);
    EXPECT_TRUE(tracingDuringWindow);
    EXPECT_FALSE(tracingAfterWindow);

    const Json doc = readJson(path);
    EXPECT_EQ(doc["displayTimeUnit"], "ms");
    const Json& other = doc["otherData"];
    EXPECT_EQ(other["rank"], 0);
    EXPECT_EQ(other["first_step"], 3);
    EXPECT_EQ(other["last_step"], 5);
    EXPECT_EQ(other["dropped_by_cap"], 0);
    EXPECT_TRUE(other["time_origin_unix_ns"].is_number_integer());
    ASSERT_EQ(other["steps"].size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(other["steps"][i]["step"], static_cast<int>(i) + 3);
        EXPECT_LT(ns(other["steps"][i]["begin_us"]), ns(other["steps"][i]["end_us"]));
    }
    const int64_t windowBegin = ns(other["window_begin_us"]);
    const int64_t windowEnd = ns(other["window_end_us"]);

    // Process and threads are named; every event is in process "rank 0" (pid rank + 1).
    EXPECT_EQ(metadataNames(doc, "process_name").begin()->second, "rank 0");
    const int trainerTid = tidNamed(doc, "trainer");
    const int pipelineTid = tidNamed(doc, "pipeline read");
    EXPECT_NE(trainerTid, pipelineTid);
    size_t nonMetadata = 0;
    for (const Json& e : doc["traceEvents"]) {
        EXPECT_EQ(e["pid"], 1);
        if (e["ph"] != "M") ++nonMetadata;
    }
    EXPECT_EQ(other["events"], nonMetadata);

    // Zones: only the window's, with non-negative durations.
    const std::vector<Json> zones = eventsOf(doc, "X");
    std::multiset<int> steps;
    std::map<std::string, int> zonesNamed;
    for (const Json& z : zones) {
        const int64_t b = ns(z["ts"]), d = ns(z["dur"]);
        EXPECT_GE(d, 0);
        EXPECT_GE(b, windowBegin) << z.dump();
        EXPECT_LE(b + d, windowEnd) << z.dump();
        ++zonesNamed[z["name"].get<std::string>()];
        if (z["cat"] == "step") {
            steps.insert(z["args"]["step"].get<int>());
            EXPECT_EQ(z["tid"], trainerTid);
        }
        if (z["cat"] == "pipeline") {
            EXPECT_EQ(z["tid"], pipelineTid);
        }
    }
    EXPECT_EQ(steps, (std::multiset<int>{3, 4, 5}));
    EXPECT_EQ(zonesNamed["forward"], 3);
    EXPECT_EQ(zonesNamed["backward"], 3);
    EXPECT_GT(zonesNamed["decode"], 0);
    EXPECT_GT(zonesNamed["read"], 0);

    // Nested properly per thread, in the file's order: each zone lies wholly within the zone
    // around it or begins after it ended.
    std::map<int, std::vector<std::pair<int64_t, int64_t>>> open;  // per tid, the enclosing zones
    std::map<int, int64_t> lastBegin;
    for (const Json& z : zones) {
        const int tid = z["tid"].get<int>();
        const int64_t b = ns(z["ts"]), e = b + ns(z["dur"]);
        if (lastBegin.count(tid)) {
            EXPECT_GE(b, lastBegin[tid]) << "zones of a thread out of order";
        }
        lastBegin[tid] = b;
        auto& stack = open[tid];
        while (!stack.empty() && b >= stack.back().second) stack.pop_back();
        if (!stack.empty()) {
            EXPECT_LE(e, stack.back().second) << "zone overlaps its parent: " << z.dump();
        }
        if (z["cat"] == "phase") {
            EXPECT_EQ(stack.size(), 1u) << "a phase outside a step: " << z.dump();
        }
        stack.emplace_back(b, e);
    }

    // Counters: "C" events with the sample under the counter's name, inside the window.
    std::set<double> losses;
    size_t queueSamples = 0;
    for (const Json& c : eventsOf(doc, "C")) {
        EXPECT_GE(ns(c["ts"]), windowBegin);
        EXPECT_LE(ns(c["ts"]), windowEnd);
        if (c["name"] == "loss") losses.insert(c["args"]["loss"].get<double>());
        if (c["name"] == "queue fill") {
            EXPECT_TRUE(c["args"]["queue fill"].is_number());
            ++queueSamples;
        }
    }
    EXPECT_EQ(losses, (std::set<double>{1.0 / 3, 1.0 / 4, 1.0 / 5}));
    EXPECT_GT(queueSamples, 0u);

    const ChromeTraceStats stats = trace.stats();
    EXPECT_TRUE(stats.windowOpened);
    EXPECT_TRUE(stats.windowClosed);
    EXPECT_EQ(stats.events, nonMetadata);
}

TEST_F(ChromeTrace, EveryEventStartsWithPhaseAndTimestamp) {
    // Some Perfetto versions find "ts" by scanning an event's text and give up on the first string
    // they cannot read; so "ph" and "ts" come before any name.
    static constexpr prof::ZoneSite site{"z", "test"};
    const std::string path = dir_.file("t.json");
    ChromeTraceWriter trace({.firstStep = 1, .lastStep = 1, .switchTracing = false});
    trace.beginStep(1);
    const int64_t t = prof::nowNs();
    spin(20'000);
    trace.endStep(1);
    const std::vector<prof::TraceEvent> events = {zone(&site, t, t + 10'000), sample(&site, t + 1, 2.0)};
    trace.events({3, "main", 0}, events);
    trace.write(path);
    const std::string text = readText(path);
    const size_t from = text.find("\"traceEvents\":[");
    ASSERT_NE(from, std::string::npos);
    std::istringstream lines(text.substr(from));
    std::string line;
    std::getline(lines, line);  // "traceEvents":[
    int n = 0;
    while (std::getline(lines, line) && line != "]}") {
        EXPECT_EQ(line.rfind("{\"ph\":\"", 0), 0u) << line;
        EXPECT_EQ(line.find("\"ts\":"), 10u) << line;  // right after {"ph":"X",
        ++n;
    }
    EXPECT_EQ(n, 4 + 2);  // process name and sort index, thread name and sort index, two events
    // displayTimeUnit and otherData precede the events (Perfetto reads them from the start only).
    EXPECT_LT(text.find("\"displayTimeUnit\""), from);
    EXPECT_LT(text.find("\"otherData\""), from);
}

TEST_F(ChromeTrace, TheCapKeepsTheEarliestEventsOfAllThreadsAndCountsTheRest) {
    static constexpr prof::ZoneSite work{"work", "test"}, depth{"depth", "test"};
    const std::string path = dir_.file("capped.json");
    ChromeTraceWriter trace({.firstStep = 1, .lastStep = 1, .maxEvents = 120, .switchTracing = false});
    trace.beginStep(1);
    const int64_t base = prof::nowNs() + 1'000;
    std::vector<prof::TraceEvent> a, b;
    for (int i = 0; i < 100; ++i) {
        a.push_back(zone(&work, base + 10'000 * i, base + 10'000 * i + 5'000));
        b.push_back(sample(&depth, base + 10'000 * i + 2'000, i));
    }
    spin(1'100'000);
    trace.endStep(1);
    // Thread A's whole batch fits; B's 21st sample does not: the trace is cut at its time, which
    // drops A's zones that ended after it, so both threads end at the same moment.
    trace.events({900, "thread a", 7}, a);
    trace.events({901, "thread b", 0}, b);
    trace.write(path);

    const int64_t cut = base + 10'000 * 20 + 2'000;
    const ChromeTraceStats stats = trace.stats();
    EXPECT_EQ(stats.events, 40u);
    EXPECT_EQ(stats.droppedByCap, 160u);
    EXPECT_EQ(stats.droppedByRing, 7u);

    const Json doc = readJson(path);
    const Json& other = doc["otherData"];
    EXPECT_EQ(other["max_events"], 120);
    EXPECT_EQ(other["events"], 40);
    EXPECT_EQ(other["dropped_by_cap"], 160);
    EXPECT_EQ(other["dropped_by_ring"], 7);
    ASSERT_TRUE(other["cut_us"].is_number());
    const int64_t cutInFile = ns(other["cut_us"]);
    std::map<std::string, Json> threads;
    for (const Json& t : other["threads"]) threads[t["name"].get<std::string>()] = t;
    EXPECT_EQ(threads["thread a"]["dropped_by_cap"], 80);
    EXPECT_EQ(threads["thread a"]["dropped_by_ring"], 7);
    EXPECT_EQ(threads["thread b"]["dropped_by_cap"], 80);
    EXPECT_EQ(eventsOf(doc, "X").size(), 20u);
    EXPECT_EQ(eventsOf(doc, "C").size(), 20u);
    for (const Json& z : eventsOf(doc, "X")) EXPECT_LT(ns(z["ts"]) + ns(z["dur"]), cutInFile);
    for (const Json& c : eventsOf(doc, "C")) EXPECT_LT(ns(c["ts"]), cutInFile);
    // The cut is at B's 21st sample, on the file's clock (origin = the writer's construction).
    const int64_t lastKept = ns(eventsOf(doc, "C").back()["ts"]);
    EXPECT_EQ(cutInFile - lastKept, cut - (base + 10'000 * 19 + 2'000));
}

TEST_F(ChromeTrace, EventsOutsideTheWindowAreLeftOut) {
    static constexpr prof::ZoneSite site{"z", "test"};
    ChromeTraceWriter trace({.firstStep = 2, .lastStep = 2, .switchTracing = false});
    const prof::TraceThread thread{5, "t", 0};
    const int64_t early = prof::nowNs();
    trace.beginStep(1);  // before the window: drained events are dropped
    spin(10'000);
    std::vector<prof::TraceEvent> before = {zone(&site, early, prof::nowNs())};
    trace.events(thread, before);
    trace.endStep(1);
    trace.beginStep(2);
    const int64_t inside = prof::nowNs();
    spin(10'000);
    const int64_t insideEnd = prof::nowNs();
    spin(10'000);
    trace.endStep(2);
    spin(10'000);
    const int64_t late = prof::nowNs();
    std::vector<prof::TraceEvent> batch = {
        zone(&site, early, insideEnd),    // began before the window opened
        zone(&site, inside, insideEnd),   // inside
        zone(&site, inside, late),        // ended after it closed
        sample(&site, inside, 1.0),       // inside
        sample(&site, late, 2.0),         // after
    };
    trace.events(thread, batch);
    const ChromeTraceStats stats = trace.stats();
    EXPECT_EQ(stats.events, 2u);
    EXPECT_EQ(stats.outsideWindow, 4u);

    const std::string path = dir_.file("w.json");
    trace.write(path);
    const Json doc = readJson(path);
    EXPECT_EQ(eventsOf(doc, "X").size(), 1u);
    EXPECT_EQ(eventsOf(doc, "C").size(), 1u);
    EXPECT_EQ(doc["otherData"]["outside_window"], 4);
}

TEST_F(ChromeTrace, WindowOpensAndClosesOnceAndSwitchesTracing) {
    if (!prof::kEnabled) GTEST_SKIP() << "built with TRAINBENCH_PROFILING=OFF";
    {
        ChromeTraceWriter trace({.firstStep = 3, .lastStep = 4});
        trace.beginStep(1);
        EXPECT_FALSE(prof::tracing());
        trace.endStep(1);
        trace.beginStep(3);
        EXPECT_TRUE(prof::tracing());
        trace.endStep(3);
        EXPECT_TRUE(prof::tracing());
        trace.beginStep(4);
        // endStep(4) never comes (a step that threw): the next step closes the window.
        trace.beginStep(5);
        EXPECT_FALSE(prof::tracing());
        EXPECT_TRUE(trace.stats().windowClosed);
        trace.beginStep(3);  // never opens again
        EXPECT_FALSE(prof::tracing());
    }
    {
        // A run resumed past the window never opens it; the file is still a valid, empty trace.
        ChromeTraceWriter trace({.rank = 2, .firstStep = 3, .lastStep = 5});
        for (int64_t s = 7; s <= 9; ++s) {
            trace.beginStep(s);
            EXPECT_FALSE(prof::tracing());
            trace.endStep(s);
        }
        EXPECT_FALSE(trace.stats().windowOpened);
        const std::string path = dir_.file("empty.json");
        trace.write(path);
        const Json doc = readJson(path);
        EXPECT_TRUE(doc["otherData"]["window_begin_us"].is_null());
        EXPECT_EQ(eventsOf(doc, "X").size(), 0u);
        EXPECT_EQ(metadataNames(doc, "process_name").begin()->second, "rank 2");
        EXPECT_EQ(doc["traceEvents"][0]["pid"], 3);
    }
    {
        // Destroyed with the window open (the run failed inside it): tracing goes off.
        ChromeTraceWriter trace({.firstStep = 1, .lastStep = 9});
        trace.beginStep(1);
        EXPECT_TRUE(prof::tracing());
    }
    EXPECT_FALSE(prof::tracing());
    EXPECT_THROW(ChromeTraceWriter({.firstStep = 5, .lastStep = 4}), std::invalid_argument);
}

TEST_F(ChromeTrace, NamesThatJsonMustEscapeRoundTrip) {
    static const std::string weirdName = "say \"hi\" \\ back\nslash\ttab\x01 ctl\x7f del / µs ✓";
    static const std::string weirdCategory = "cat \"q\"";
    static const prof::ZoneSite weird{weirdName.c_str(), weirdCategory.c_str()};
    static constexpr prof::ZoneSite badUtf8{"bad \xff\xfe end \xe2\x82", "test"};
    const std::string threadName = "thread \"x\"\n\\";
    const std::string path = dir_.file("escape.json");
    ChromeTraceWriter trace({.firstStep = 1, .lastStep = 1, .switchTracing = false});
    trace.beginStep(1);
    const int64_t t = prof::nowNs();
    spin(20'000);
    trace.endStep(1);
    const std::vector<prof::TraceEvent> events = {zone(&weird, t, t + 1'000, 2.5), sample(&weird, t + 2'000, 4.0),
                                                  zone(&badUtf8, t + 3'000, t + 4'000)};
    trace.events({11, threadName, 0}, events);
    trace.write(path);

    const Json doc = readJson(path);
    const std::vector<Json> zones = eventsOf(doc, "X");
    ASSERT_EQ(zones.size(), 2u);
    EXPECT_EQ(zones[0]["name"], weirdName);
    EXPECT_EQ(zones[0]["cat"], weirdCategory);
    EXPECT_EQ(zones[0]["args"]["value"], 2.5);
    EXPECT_EQ(zones[1]["name"], "bad \xEF\xBF\xBD\xEF\xBF\xBD end \xEF\xBF\xBD");  // U+FFFD for bad bytes
    EXPECT_FALSE(zones[1].contains("args"));  // no argument: none written
    const std::vector<Json> counters = eventsOf(doc, "C");
    ASSERT_EQ(counters.size(), 1u);
    EXPECT_EQ(counters[0]["args"][weirdName], 4.0);
    EXPECT_EQ(tidNamed(doc, threadName), chromeTid(-1, 11));
}

TEST_F(ChromeTrace, MergingTwoRanksShiftsThemOntoOneClock) {
    static constexpr prof::ZoneSite site{"step", "step"};
    const std::string base = dir_.file("job.trace");
    ChromeTraceWriter rank0({.rank = 0, .firstStep = 1, .lastStep = 1, .switchTracing = false});
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // rank 1 starts later
    ChromeTraceWriter rank1({.rank = 1, .firstStep = 1, .lastStep = 1, .switchTracing = false});
    rank0.beginStep(1);
    rank1.beginStep(1);
    const int64_t t = prof::nowNs();
    spin(50'000);
    rank0.endStep(1);
    rank1.endStep(1);
    // The same moment in both processes (here, one process standing in for two).
    const std::vector<prof::TraceEvent> events = {zone(&site, t, t + 40'000, 1)};
    rank0.events({0, "trainer", 0}, events);
    rank1.events({0, "trainer", 0}, events);
    rank0.write(rankTracePath(base, 0));
    rank1.write(rankTracePath(base, 1));
    EXPECT_EQ(rankTracePath(base, 1), base + ".rank1");
    mergeChromeTraces({rankTracePath(base, 0), rankTracePath(base, 1)}, base);

    const Json r0 = readJson(rankTracePath(base, 0));
    const Json r1 = readJson(rankTracePath(base, 1));
    const int64_t ts0 = ns(eventsOf(r0, "X").at(0)["ts"]);
    const int64_t ts1 = ns(eventsOf(r1, "X").at(0)["ts"]);
    EXPECT_GE(ts0 - ts1, 25'000'000);  // each on its own origin: rank 1's is ~30 ms later

    const Json merged = readJson(base);
    std::map<int, int64_t> zoneTs;
    for (const Json& z : eventsOf(merged, "X")) zoneTs[z["pid"].get<int>()] = ns(z["ts"]);
    ASSERT_EQ(zoneTs.size(), 2u);
    ASSERT_TRUE(zoneTs.count(1) && zoneTs.count(2));
    // On the common clock the two are the same moment, as far as the system and steady clocks
    // agree over those 30 ms (well under a millisecond).
    EXPECT_NEAR(static_cast<double>(zoneTs[2] - zoneTs[1]), 0.0, 1e6);
    EXPECT_EQ(zoneTs[1], ts0);  // the earliest origin is the common one: rank 0 is not shifted

    std::map<int, std::string> processes;
    for (const Json& e : eventsOf(merged, "M"))
        if (e["name"] == "process_name") processes[e["pid"].get<int>()] = e["args"]["name"];
    EXPECT_EQ(processes, (std::map<int, std::string>{{1, "rank 0"}, {2, "rank 1"}}));
    std::set<int> trainerTids;
    for (const Json& e : eventsOf(merged, "M"))
        if (e["name"] == "thread_name") trainerTids.insert(e["tid"].get<int>());
    EXPECT_EQ(trainerTids, (std::set<int>{chromeTid(0, 0), chromeTid(1, 0)}));  // distinct across ranks

    const Json& other = merged["otherData"];
    EXPECT_EQ(other["clock_aligned"], true);
    EXPECT_EQ(other["events"], 2);
    EXPECT_EQ(other["time_origin_unix_ns"], r0["otherData"]["time_origin_unix_ns"]);
    ASSERT_EQ(other["ranks"].size(), 2u);
    EXPECT_EQ(other["ranks"][0]["shift_us"], 0.0);
    EXPECT_NEAR(other["ranks"][1]["shift_us"].get<double>() * 1000.0, static_cast<double>(ts0 - ts1), 1e6);
    EXPECT_EQ(other["ranks"][1]["otherData"]["rank"], 1);
}

TEST_F(ChromeTrace, MergeNamesTheFileItCannotUse) {
    ChromeTraceWriter rank0({.rank = 0, .firstStep = 1, .lastStep = 1, .switchTracing = false});
    const std::string good = dir_.file("t.rank0");
    rank0.write(good);
    const std::string garbage = dir_.file("t.rank1");
    std::ofstream(garbage) << "{\"traceEvents\": [ {\"ph\": \"X\",";
    const std::string out = dir_.file("t");
    const auto messageOf = [&](const std::vector<std::string>& inputs) -> std::string {
        try {
            mergeChromeTraces(inputs, out);
        } catch (const TraceError& e) {
            return e.what();
        }
        return "no error";
    };
    const std::string notJson = messageOf({good, garbage});
    EXPECT_NE(notJson.find(garbage + ": not JSON at byte offset"), std::string::npos) << notJson;
    const std::string twice = messageOf({good, good});
    EXPECT_NE(twice.find("the same rank twice"), std::string::npos) << twice;
    const std::string missing = messageOf({good, dir_.file("nope")});
    EXPECT_NE(missing.find(dir_.file("nope") + ": cannot open"), std::string::npos) << missing;
    std::ofstream(garbage) << "{\"otherData\": {}}";
    const std::string notTrace = messageOf({garbage});
    EXPECT_NE(notTrace.find("no traceEvents array"), std::string::npos) << notTrace;
    EXPECT_FALSE(std::filesystem::exists(out));  // nothing written on an error
}

TEST_F(ChromeTrace, AFailedWriteNamesThePathAndLeavesNoFile) {
    ChromeTraceWriter trace({.firstStep = 1, .lastStep = 1, .switchTracing = false});
    const std::string path = dir_.file("missing-folder/trace.json");
    try {
        trace.write(path);
        FAIL() << "no error";
    } catch (const TraceError& e) {
        EXPECT_NE(std::string(e.what()).find(path + ": trace not saved"), std::string::npos) << e.what();
    }
    // A rewrite replaces the file whole; no temporary file stays behind.
    const std::string good = dir_.file("trace.json");
    trace.write(good);
    trace.write(good);
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
        (void)entry;
        ++files;
    }
    EXPECT_EQ(files, 1u);
}

TEST(JsonOut, MicrosecondsAreExactAndStringsEscaped) {
    const auto micros = [](int64_t n) {
        std::string s;
        jsonout::appendMicros(s, n);
        return s;
    };
    EXPECT_EQ(micros(0), "0.000");
    EXPECT_EQ(micros(1'234'567), "1234.567");
    EXPECT_EQ(micros(-1), "-0.001");
    EXPECT_EQ(micros(9'007'199'254'740'993), "9007199254740.993");  // past a double's integers
    EXPECT_EQ(micros(INT64_MIN), "-9223372036854775.808");
    std::string s;
    jsonout::appendString(s, std::string("a\"b\\c\n\x1f\x7f", 8));
    EXPECT_EQ(s, "\"a\\\"b\\\\c\\n\\u001f\\u007f\"");
    s.clear();
    jsonout::appendDouble(s, 3.0);
    s += ' ';
    jsonout::appendDouble(s, 0.1);
    s += ' ';
    jsonout::appendDouble(s, std::nan(""));
    EXPECT_EQ(s, "3 0.1 null");
}

}  // namespace
}  // namespace trainbench::profiler
