#include "app/job/spawnprocess.h"

#include <signal.h>

#include <cstring>
#include <stdexcept>

extern char** environ;

namespace trainbench::app {

pid_t spawnInOwnGroup(const std::string& program, std::vector<std::string> argv, std::vector<std::string>* env,
                      const posix_spawn_file_actions_t* actions) {
    std::vector<char*> cargv, cenv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    if (env) {
        for (std::string& e : *env) cenv.push_back(e.data());
        cenv.push_back(nullptr);
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, program.c_str(), actions, &attr, cargv.data(), env ? cenv.data() : environ);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw std::runtime_error(std::strerror(rc));
    return pid;
}

}  // namespace trainbench::app
