#pragma once
// Network addresses as users write them in cluster specs and as errors print them: "host:port",
// "[v6 address]:port".
#include <cstdint>
#include <string>

namespace trainbench::engine::net {

struct HostPort {
    std::string host;
    uint16_t port = 0;
};
// Throws RendezvousError naming the text when it is not one.
HostPort parseHostPort(const std::string& text);
std::string formatHostPort(const std::string& host, uint16_t port);

}  // namespace trainbench::engine::net
