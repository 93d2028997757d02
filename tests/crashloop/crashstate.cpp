#include "tests/crashloop/crashstate.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace trainbench::crashloop {

CrashState CrashState::load(const std::string& path) {
    CrashState state;
    std::ifstream in(path);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        const auto eq = line.find('=');
        if (eq == std::string::npos) throw std::runtime_error(path + ":" + std::to_string(number) + ": no '='");
        const std::string key = line.substr(0, eq);
        std::istringstream value(line.substr(eq + 1));
        if (key == "last_run") {
            value >> state.lastRun;
        } else if (key == "run") {
            int64_t id = 0;
            RunSeen seen;
            value >> id >> seen.status >> seen.steps >> seen.evals;
            state.runs[id] = seen;
        } else if (key == "checkpoint") {
            CheckpointPrint p;
            value >> p.bytes >> std::hex >> p.crc >> std::dec >> p.run >> p.step;
            state.checkpoint = p;
        } else {
            throw std::runtime_error(path + ":" + std::to_string(number) + ": unknown key '" + key + "'");
        }
        if (value.fail()) throw std::runtime_error(path + ":" + std::to_string(number) + ": bad value for " + key);
    }
    return state;
}

void CrashState::save(const std::string& path) const {
    const std::string temp = path + ".new";
    {
        std::ofstream out(temp, std::ios::trunc);
        out << "last_run=" << lastRun << "\n";
        for (const auto& [id, seen] : runs)
            out << "run=" << id << " " << seen.status << " " << seen.steps << " " << seen.evals << "\n";
        if (checkpoint)
            out << "checkpoint=" << checkpoint->bytes << " " << std::hex << checkpoint->crc << std::dec << " "
                << checkpoint->run << " " << checkpoint->step << "\n";
        if (!out) throw std::runtime_error(temp + ": cannot write the crash loop's state");
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) throw std::runtime_error(path + ": cannot replace the state");
}

std::string describe(const CheckpointPrint& p) {
    std::ostringstream s;
    s << "run " << p.run << ", step " << p.step << ", " << p.bytes << " bytes, crc32c " << std::hex << p.crc;
    return s.str();
}

}  // namespace trainbench::crashloop
