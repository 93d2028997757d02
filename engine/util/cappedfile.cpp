#include "engine/util/cappedfile.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace trainbench::engine {

std::optional<std::string> readCappedFile(const std::string& path, std::size_t maxBytes, std::string* error) {
    const auto fail = [&](const std::string& why) -> std::optional<std::string> {
        *error = why;
        return std::nullopt;
    };
    const auto overLimit = [&](const std::string& size) {
        return fail("is " + size + " bytes, over the limit of " + std::to_string(maxBytes) + " bytes");
    };
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) return fail("cannot open: " + std::string(std::strerror(errno)));
    struct stat st {};
    if (::fstat(::fileno(file.get()), &st) != 0) return fail("cannot read: " + std::string(std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) return fail("cannot read: " + std::string(std::strerror(EISDIR)));
    if (S_ISREG(st.st_mode) && static_cast<unsigned long long>(st.st_size) > maxBytes)
        return overLimit(std::to_string(st.st_size));
    std::string text;
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file.get())) > 0) {
        if (n > maxBytes - text.size()) return overLimit("more than " + std::to_string(maxBytes));
        text.append(buf, n);
    }
    if (std::ferror(file.get())) return fail("cannot read: " + std::string(std::strerror(errno)));
    return text;
}

}  // namespace trainbench::engine
