#pragma once
// What the client saw of one query, every time in nanoseconds from the measurement's start.
// The latency a scenario reports runs from `scheduled` (when the query was due), so time the query
// spent waiting for the client (issue lag) or for a free connection counts against the server's
// answer, as it would for a real user: no coordinated omission.
#include <cstdint>

#include "app/loadtest/servertiming.h"

namespace trainbench::app::loadtest {

struct QueryRecord {
    int64_t id = 0;
    int64_t scheduled = 0;  // due (Server: its Poisson arrival; Offline: 0; closed loop: when issued)
    int64_t issued = 0;     // the client's thread got round to it
    int64_t sent = 0;       // a connection was free and the request started on it
    int64_t written = 0;    // the request was on the wire
    int64_t received = 0;   // the whole response was read
    int64_t done = 0;       // the response was checked (predictions counted)
    int status = 0;         // HTTP status; 0 when no response came
    bool ok = false;        // 200 with the expected number of predictions
    ServerTiming server;

    int64_t latency() const { return done - scheduled; }
    int64_t issueLag() const { return issued - scheduled; }
    int64_t connectionWait() const { return sent - issued; }
    int64_t sendLag() const { return sent - scheduled; }
};

}  // namespace trainbench::app::loadtest
