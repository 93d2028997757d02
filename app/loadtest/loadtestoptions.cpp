#include "app/loadtest/loadtestoptions.h"

#include "engine/net/hostport.h"

namespace trainbench::app::loadtest {

namespace {
constexpr std::pair<Scenario, const char*> kNames[] = {
    {Scenario::SingleStream, "single-stream"},
    {Scenario::Server, "server"},
    {Scenario::Offline, "offline"},
    {Scenario::ConcurrencySweep, "concurrency"},
};
}  // namespace

const char* scenarioName(Scenario s) {
    for (const auto& [scenario, name] : kNames)
        if (scenario == s) return name;
    return "?";
}

std::optional<Scenario> parseScenario(std::string_view name) {
    for (const auto& [scenario, text] : kNames)
        if (name == text) return scenario;
    return std::nullopt;
}

PredictTarget parseTargetUrl(const std::string& url, const std::string& model) {
    constexpr std::string_view kScheme = "http://";
    if (url.rfind(kScheme, 0) != 0) throw LoadTestError("'" + url + "' is not an http:// URL");
    std::string rest = url.substr(kScheme.size());
    PredictTarget target;
    target.model = model;
    if (const size_t slash = rest.find('/'); slash != std::string::npos) {
        constexpr std::string_view kModels = "/v1/models/";
        const std::string path = rest.substr(slash);
        rest.resize(slash);
        if (path != "/") {
            if (path.rfind(kModels, 0) != 0 || path.size() == kModels.size())
                throw LoadTestError("'" + url + "': the path must be /v1/models/NAME, not '" + path + "'");
            target.model = path.substr(kModels.size());
        }
    }
    try {
        const engine::net::HostPort hp = engine::net::parseHostPort(rest);
        target.host = hp.host;
        target.port = hp.port;
    } catch (const std::exception&) {  // its message speaks of the rendezvous store
        throw LoadTestError("'" + url + "': expected http://host:port with a port in 1..65535");
    }
    return target;
}

}  // namespace trainbench::app::loadtest
