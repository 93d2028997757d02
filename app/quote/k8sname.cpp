#include <algorithm>

#include "app/quote/quote.h"

namespace trainbench::app {

std::string k8sName(std::string_view name, size_t maxLength) {
    std::string out;
    for (char c : name) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        out += (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
    }
    if (out.empty() || !(out[0] >= 'a' && out[0] <= 'z')) out = "tb-" + out;
    out.resize(std::min(out.size(), std::max<size_t>(maxLength, 3)));
    while (out.back() == '-') out.pop_back();  // "tb-" at least keeps "tb"
    return out;
}

}  // namespace trainbench::app
