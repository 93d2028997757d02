#pragma once
// Whether a predict call's answer is one: HTTP 200 and {"predictions": [...]} with one entry per
// instance sent. A 503 from a full queue answers fast, so counting it as a latency would flatter
// the server; every failure is an error of the run instead.
#include <string>
#include <string_view>

namespace trainbench::app::loadtest {

struct ResponseVerdict {
    std::string reason;   // "" when ok; else "HTTP 503", "bad response"
    std::string message;  // what was wrong, with the server's own "error" text when it sent one
};

ResponseVerdict checkPredictResponse(int status, std::string_view body, int expectedPredictions);

}  // namespace trainbench::app::loadtest
