// mergeChromeTraces(): the launcher of a multi-worker job joins its ranks' trace files. Each input
// is read twice with nlohmann's callback parser, which hands over one event at a time and forgets
// it: first for the otherData of all inputs (the earliest time origin is the common one), then to
// shift each event and stream it out. Memory stays at one event, not one file of a million.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"
#include "profiler/trace/chrometrace.h"
#include "profiler/trace/traceerror.h"

namespace trainbench::profiler {

namespace {

// ordered_json: events keep their keys' order ("ph" and "ts" first, see chrometrace.cpp).
using Json = nlohmann::ordered_json;

// Parses a trace file (JSON Object Format, or a bare array of events), calling onEvent for every
// event object and dropping it; returns the rest of the document (traceEvents left empty).
template <class OnEvent>
Json parseTrace(const std::string& path, OnEvent&& onEvent) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TraceError(path + ": cannot open the trace: " + std::strerror(errno));
    std::string topKey;
    bool topArray = false, sawEvents = false;
    Json doc;
    try {
        doc = Json::parse(in, [&](int depth, Json::parse_event_t event, Json& parsed) {
            using E = Json::parse_event_t;
            if (depth == 0 && event == E::array_start) topArray = true;
            if (depth == 1 && event == E::key) topKey = parsed.get<std::string>();
            if (depth == 1 && event == E::array_start && topKey == "traceEvents") sawEvents = true;
            const bool isEvent = topArray ? depth == 1 : depth == 2 && topKey == "traceEvents";
            if (isEvent && event == E::object_end) {
                onEvent(parsed);
                return false;
            }
            return true;
        });
    } catch (const Json::parse_error& e) {
        throw TraceError(path + ": not JSON at byte offset " + std::to_string(e.byte) + ": " + e.what());
    }
    if (!topArray && !sawEvents) throw TraceError(path + ": not a Chrome trace: no traceEvents array");
    return doc;
}

struct Input {
    std::string path;
    Json otherData = Json::object();
    std::optional<int64_t> originUnixNs;
};

int64_t sumOf(const std::vector<Input>& inputs, const char* key) {
    int64_t sum = 0;
    for (const Input& in : inputs)
        if (in.otherData.contains(key) && in.otherData[key].is_number_integer())
            sum += in.otherData[key].get<int64_t>();
    return sum;
}

}  // namespace

void mergeChromeTraces(const std::vector<std::string>& inputs, const std::string& output) try {
    if (inputs.empty()) throw std::invalid_argument("merging traces into " + output + ": no input files");

    // Pass 1: every input's otherData, and the common time origin.
    std::vector<Input> files;
    std::map<int64_t, std::string> pidOwner;
    std::optional<int64_t> base;
    for (const std::string& path : inputs) {
        Json doc = parseTrace(path, [](Json&) {});
        Input in;
        in.path = path;
        if (doc.is_object() && doc.contains("otherData") && doc["otherData"].is_object())
            in.otherData = doc["otherData"];
        const Json& other = in.otherData;
        if (other.contains("time_origin_unix_ns") && other["time_origin_unix_ns"].is_number_integer()) {
            in.originUnixNs = other["time_origin_unix_ns"].get<int64_t>();
            base = base ? std::min(*base, *in.originUnixNs) : *in.originUnixNs;
        }
        if (other.contains("pid") && other["pid"].is_number_integer()) {
            const int64_t pid = other["pid"].get<int64_t>();
            auto [it, fresh] = pidOwner.emplace(pid, path);
            if (!fresh)
                throw TraceError(path + ": holds pid " + std::to_string(pid) + " as " + it->second +
                                 " does (the same rank twice?)");
        }
        files.push_back(std::move(in));
    }

    Json merged = Json::object();
    merged["format"] = "trainbench trace 1, merged";
    merged["time_origin_unix_ns"] = base ? Json(*base) : Json(nullptr);
    bool aligned = true;
    for (const Input& in : files) aligned = aligned && in.originUnixNs.has_value();
    merged["clock_aligned"] = aligned;
    for (const char* key : {"events", "dropped_by_cap", "dropped_by_ring"}) merged[key] = sumOf(files, key);
    Json ranks = Json::array();
    for (const Input& in : files) {
        const int64_t shift = in.originUnixNs ? *in.originUnixNs - *base : 0;
        ranks.push_back(
            {{"file", in.path}, {"shift_us", static_cast<double>(shift) / 1000.0}, {"otherData", in.otherData}});
    }
    merged["ranks"] = std::move(ranks);

    // Pass 2: the events, shifted onto the common origin, streamed out.
    engine::AtomicFileWriter file(output, {.what = "trace"});
    std::string& out = file.buffer();
    out += "{\"displayTimeUnit\":\"ms\",\"otherData\":";
    out += merged.dump();
    out += ",\"traceEvents\":[";
    bool first = true;
    std::map<int64_t, size_t> eventPidOwner;
    for (size_t i = 0; i < files.size(); ++i) {
        const Input& in = files[i];
        const int64_t shift = in.originUnixNs ? *in.originUnixNs - *base : 0;
        parseTrace(in.path, [&](Json& event) {
            if (event.contains("pid") && event["pid"].is_number_integer()) {
                const int64_t pid = event["pid"].get<int64_t>();
                auto [it, fresh] = eventPidOwner.emplace(pid, i);
                if (!fresh && it->second != i)
                    throw TraceError(in.path + ": has events of pid " + std::to_string(pid) + " as " +
                                     files[it->second].path + " does (the same rank twice?)");
            }
            if (shift != 0 && event.contains("ts") && event["ts"].is_number()) {
                // Through integer nanoseconds: the text stays at three decimals, as written.
                const auto ns = std::llround(event["ts"].get<double>() * 1000.0) + shift;
                event["ts"] = static_cast<double>(ns) / 1000.0;
            }
            out += first ? "\n" : ",\n";
            first = false;
            out += event.dump();
            file.flushIfFull();
        });
    }
    out += "\n]}\n";
    file.commit();
} catch (const engine::FileWriteError& e) {
    throw TraceError(e.what());  // the writer's message, as the trace's own error
}

}  // namespace trainbench::profiler
