#include "engine/serving/servingoptions.h"

namespace trainbench::engine::serving {

std::string ServingLimits::validate() const {
    if (max_body_bytes < 1 || max_body_bytes > (int64_t{1} << 30))
        return "max_body_bytes is " + std::to_string(max_body_bytes) + ", expected 1 to 1073741824";
    if (max_inflight_body_bytes < max_body_bytes)
        return "max_inflight_body_bytes is " + std::to_string(max_inflight_body_bytes) +
               ", expected at least max_body_bytes (" + std::to_string(max_body_bytes) + ")";
    if (max_header_bytes < 1024 || max_header_bytes > (1 << 20))
        return "max_header_bytes is " + std::to_string(max_header_bytes) + ", expected 1024 to 1048576";
    if (max_connections < 1) return "max_connections is " + std::to_string(max_connections) + ", expected at least 1";
    for (const auto& [name, t] : {std::pair{"header_timeout", header_timeout}, std::pair{"body_timeout", body_timeout},
                                  std::pair{"write_timeout", write_timeout}, std::pair{"keepalive_timeout", keepalive_timeout}})
        if (t.count() < 1) return std::string(name) + " is " + std::to_string(t.count()) + " ms, expected at least 1 ms";
    return {};
}

}  // namespace trainbench::engine::serving
