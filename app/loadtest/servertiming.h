#pragma once
// The server's own account of a request, from the X-Trainbench-Timing response header that
// `trainbench-cli serve` adds (docs/serving.md): "queue_us=…,batch_us=…,compute_us=…,decode_us=…,
// encode_us=…,batch=…". Keys it does not know are skipped, so the server may add fields.
#include <cstdint>
#include <string>
#include <string_view>

namespace trainbench::app::loadtest {

inline constexpr std::string_view kTimingHeader = "X-Trainbench-Timing";

struct ServerTiming {
    bool present = false;   // the header was there and every field it names parsed
    int64_t queueUs = 0;    // waiting in the request queue
    int64_t batchUs = 0;    // waiting for the batch to form
    int64_t decodeUs = 0;   // JSON body to tensor
    int64_t computeUs = 0;  // the model call
    int64_t encodeUs = 0;   // predictions to JSON
    int64_t batch = 0;      // examples in the batch this request ran in

    int64_t totalUs() const { return queueUs + batchUs + decodeUs + computeUs + encodeUs; }
};

// The header's value parsed, or, in `error`, what is wrong with it ("field 'queue_us': '12x' is
// not a whole number of microseconds"); `present` is false then.
ServerTiming parseServerTiming(std::string_view value, std::string& error);

}  // namespace trainbench::app::loadtest
