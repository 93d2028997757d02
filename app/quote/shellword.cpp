#include "app/quote/quote.h"

namespace trainbench::app {

std::string shellWord(std::string_view value, std::string_view what) {
    std::string out = "'";
    out.reserve(value.size() + 2);
    for (size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        if (c == '\0')
            throw QuoteError(std::string(what) + " holds a NUL byte at byte " + std::to_string(i) +
                             ", which a shell script cannot pass on (arguments end at NUL)");
        if (c == '\'')
            out += "'\\''";  // close the quotes, an escaped quote, open them again
        else
            out += c;
    }
    out += '\'';
    return out;
}

}  // namespace trainbench::app
