#include "engine/serving/descriptorlimit.h"

#include <sys/resource.h>

namespace trainbench::engine::serving {

DescriptorLimit raiseDescriptorLimit() {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return {};
    DescriptorLimit out{rl.rlim_cur, rl.rlim_cur};
    // An unlimited hard limit still cannot pass the kernel's nr_open (2^20 by default).
    const rlim_t target = rl.rlim_max == RLIM_INFINITY ? rlim_t{1} << 20 : rl.rlim_max;
    if (rl.rlim_cur < target) {
        rlimit raised = rl;
        raised.rlim_cur = target;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) out.after = target;
    }
    return out;
}

}  // namespace trainbench::engine::serving
