// accept, connect and listen as this program defines them, so that libgloo's calls to them (through
// its PLT) come here first (glooguard.h). A call whose return address lies in libgloo's code goes to
// the guard; every other call (Asio's, the store's, a sanitizer's) goes on to the next definition.
// The executable must export these symbols: the linker does so because libgloo.so refers to them,
// and GlooGuard::unavailable() checks it at run time.
#include <dlfcn.h>
#include <link.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/collective/glooguard.h"

namespace trainbench::engine {

namespace {

struct CodeRange {
    uintptr_t begin, end;
};

int collectGlooCode(dl_phdr_info* info, size_t, void* out) {
    const char* name = info->dlpi_name ? info->dlpi_name : "";
    const char* base = std::strrchr(name, '/');
    if (std::strncmp(base ? base + 1 : name, "libgloo.so", 10) != 0) return 0;
    auto* ranges = static_cast<std::vector<CodeRange>*>(out);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& h = info->dlpi_phdr[i];
        if (h.p_type == PT_LOAD && (h.p_flags & PF_X))
            ranges->push_back({info->dlpi_addr + h.p_vaddr, info->dlpi_addr + h.p_vaddr + h.p_memsz});
    }
    return 1;
}

// libgloo's executable segments, found once (it is a DT_NEEDED library: never unloaded).
const std::vector<CodeRange>& glooCode() {
    static const std::vector<CodeRange> ranges = [] {
        std::vector<CodeRange> r;
        dl_iterate_phdr(collectGlooCode, &r);
        return r;
    }();
    return ranges;
}

bool fromGloo(const void* returnAddress) {
    const auto a = reinterpret_cast<uintptr_t>(returnAddress);
    for (const CodeRange& r : glooCode())
        if (a >= r.begin && a < r.end) return true;
    return false;
}

template <class F>
F nextDefinition(const char* name) {
    return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

const SocketCalls& libcSocketCalls() {
    static const SocketCalls calls{nextDefinition<decltype(SocketCalls::accept)>("accept"),
                                   nextDefinition<decltype(SocketCalls::connect)>("connect"),
                                   nextDefinition<decltype(SocketCalls::listen)>("listen")};
    return calls;
}

std::string GlooGuard::unavailable() {
    if (glooCode().empty()) return "libgloo is not loaded as a shared library";
    const SocketCalls& next = libcSocketCalls();
    if (!next.accept || !next.connect || !next.listen) return "libc's accept, connect or listen cannot be found";
    // What libgloo's PLT resolves to: the first definition in the global scope.
    if (dlsym(RTLD_DEFAULT, "accept") != reinterpret_cast<void*>(&::accept) ||
        dlsym(RTLD_DEFAULT, "connect") != reinterpret_cast<void*>(&::connect) ||
        dlsym(RTLD_DEFAULT, "listen") != reinterpret_cast<void*>(&::listen))
        return "the executable does not export the guard's accept, connect and listen (is trainbench_engine linked "
               "into a shared library?)";
    return {};
}

}  // namespace trainbench::engine

using trainbench::engine::fromGloo;
using trainbench::engine::libcSocketCalls;
namespace glooguard = trainbench::engine::glooguard;

extern "C" {

__attribute__((noinline)) int accept(int fd, sockaddr* address, socklen_t* length) {
    if (!fromGloo(__builtin_return_address(0))) return libcSocketCalls().accept(fd, address, length);
    return glooguard::accept(fd, address, length);
}

__attribute__((noinline)) int connect(int fd, const sockaddr* address, socklen_t length) {
    if (!fromGloo(__builtin_return_address(0))) return libcSocketCalls().connect(fd, address, length);
    return glooguard::connect(fd, address, length);
}

__attribute__((noinline)) int listen(int fd, int backlog) noexcept {
    if (!fromGloo(__builtin_return_address(0))) return libcSocketCalls().listen(fd, backlog);
    return glooguard::listen(fd, backlog);
}

}  // extern "C"
