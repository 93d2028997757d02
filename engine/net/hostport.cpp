#include "engine/net/hostport.h"

#include <charconv>

#include "engine/util/errors.h"

namespace trainbench::engine::net {

HostPort parseHostPort(const std::string& text) {
    const size_t colon = text.rfind(':');
    const auto bad = [&](const char* why) {
        return RendezvousError("rendezvous store address '" + text + "': " + why + " (expected host:port)");
    };
    if (colon == std::string::npos) throw bad("no port");
    HostPort hp;
    hp.host = text.substr(0, colon);
    if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']')
        hp.host = hp.host.substr(1, hp.host.size() - 2);
    if (hp.host.empty()) throw bad("no host");
    unsigned port = 0;
    const char* first = text.data() + colon + 1;
    const char* last = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, port);
    if (first == last || ec != std::errc() || ptr != last || port == 0 || port > 65535)
        throw bad("port is not a number in 1..65535");
    hp.port = static_cast<uint16_t>(port);
    return hp;
}

std::string formatHostPort(const std::string& host, uint16_t port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace trainbench::engine::net
