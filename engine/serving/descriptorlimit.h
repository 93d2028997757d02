#pragma once
// Every connection costs the server a file descriptor, and a process starts with a soft limit of
// 1024 on most systems, far below what many idle clients need. The server raises the soft limit to
// the hard one at start (allowed without privileges) and caps its connections below it.
#include <cstdint>

namespace trainbench::engine::serving {

struct DescriptorLimit {
    uint64_t before = 0;  // the soft limit found
    uint64_t after = 0;   // the soft limit now (the hard limit, if raising it worked)
};

DescriptorLimit raiseDescriptorLimit();

}  // namespace trainbench::engine::serving
