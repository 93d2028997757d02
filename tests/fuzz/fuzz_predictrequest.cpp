// The inference server's parsers of what any client sends: the predict body's decoder and the
// request target's router, on arbitrary bytes. The decoder either fails with a message or gives
// whole examples of the servable's shape, never more than the cap, with the floats it read; the
// first byte picks the servable's example shape, so nested shapes and wrappers are reached too.
#include <string>
#include <string_view>

#include "engine/serving/predictrequest.h"
#include "engine/serving/route.h"
#include "fuzzfile.h"

using namespace trainbench::engine::serving;
using trainbench::fuzz::mismatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const std::vector<int64_t> shapes[] = {{4}, {2, 3}, {}, {1, 1, 2}};
    Servable s;
    s.name = "m";
    s.inputShape = shapes[data[0] % 4];
    s.outputs = 2;
    const int64_t cap = 1 + data[0] / 4 % 8;
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
    PredictRequest r;
    const std::string error = decodePredictRequest(body, s, cap, r);
    if (error.empty()) {
        if (r.size < 1 || r.size > cap) mismatch("accepted " + std::to_string(r.size) + " examples, cap " + std::to_string(cap));
        if (static_cast<int64_t>(r.data.size()) != r.size * s.exampleSize())
            mismatch(std::to_string(r.data.size()) + " floats for " + std::to_string(r.size) + " examples");
    } else if (static_cast<int64_t>(r.data.size()) > cap * s.exampleSize()) {
        mismatch("kept " + std::to_string(r.data.size()) + " floats past the cap before failing");
    }
    const Route route = parseRoute(body);
    if (route.kind == Route::Kind::Invalid && route.message.empty()) mismatch("an invalid route without a message");
    return 0;
}
