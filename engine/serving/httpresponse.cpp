#include "engine/serving/httpresponse.h"

#include <ostream>  // Boost 1.74's string_view streams without including it

#include <boost/beast/http/status.hpp>

namespace trainbench::engine::serving {

std::string httpResponse(int status, std::string_view contentType, std::string_view body, bool keepAlive,
                         std::string_view extraHeaders) {
    namespace http = boost::beast::http;
    const auto reason = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
    std::string out;
    out.reserve(body.size() + 160 + extraHeaders.size());
    out += "HTTP/1.1 " + std::to_string(status) + " ";
    out.append(reason.data(), reason.size());
    out += "\r\nServer: trainbench\r\nContent-Type: ";
    out += contentType;
    out += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    if (!keepAlive) out += "Connection: close\r\n";
    out += extraHeaders;
    out += "\r\n";
    out += body;
    return out;
}

}  // namespace trainbench::engine::serving
