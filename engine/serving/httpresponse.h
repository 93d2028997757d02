#pragma once
// One HTTP/1.1 response as the bytes that go on the wire: status line with the standard reason,
// Content-Type, Content-Length, "Connection: close" when the connection ends after it, and any
// further header lines ("Name: value\r\n" each).
#include <string>
#include <string_view>

namespace trainbench::engine::serving {

std::string httpResponse(int status, std::string_view contentType, std::string_view body, bool keepAlive,
                         std::string_view extraHeaders = {});

constexpr std::string_view kJsonType = "application/json";
// Prometheus' text exposition format.
constexpr std::string_view kMetricsType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace trainbench::engine::serving
