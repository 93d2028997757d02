// An experiment file on arbitrary bytes, through what `trainbench-cli run` does with it: the limits,
// the parser, --set overrides, validation and sweep expansion (expandSweep). The input is the file;
// after a line "--set", each further line is one override. Every refusal must be an ExperimentError
// naming the file; every point it accepts must parse again from its own resolved JSON to the same
// resolved JSON (experiment.h promises that).
#include <algorithm>
#include <string>
#include <vector>

#include "app/experiment/experiment.h"
#include "app/experiment/sweep.h"
#include "fuzzfile.h"

using namespace trainbench::app;
using trainbench::fuzz::mismatch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    const std::string marker = "\n--set\n";
    const size_t split = input.find(marker);
    const std::string text = input.substr(0, split);
    std::vector<std::string> overrides;
    if (split != std::string::npos) {
        for (size_t at = split + marker.size(); at <= input.size();) {
            const size_t end = std::min(input.find('\n', at), input.size());
            overrides.push_back(input.substr(at, end - at));
            at = end + 1;
        }
    }
    std::vector<SweepPoint> points;
    try {
        points = expandSweep(text, "/fuzz/x.json", overrides);
    } catch (const ExperimentError& e) {
        if (std::string(e.what()).rfind("/fuzz/x.json", 0) != 0) mismatch(std::string("message without the file: ") + e.what());
        return 0;
    }
    for (const SweepPoint& p : points) {
        const std::string again = p.experiment.resolved.dump();
        try {
            if (parseExperiment(again, "/fuzz/x.json").resolved != p.experiment.resolved)
                mismatch("point '" + p.name + "' parses again to another experiment: " + again);
        } catch (const ExperimentError& e) {
            mismatch("point '" + p.name + "' does not parse again: " + e.what() + "\n" + again);
        }
    }
    return 0;
}
