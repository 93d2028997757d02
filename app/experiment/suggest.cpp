#include "app/experiment/suggest.h"

#include <algorithm>
#include <cctype>

namespace trainbench::app {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string lowered(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), lower);
    return s;
}

// How many edits still look like a typo rather than a different word: one for short keys
// ("seed" vs "need" should not match "size"), about a third of the length for long ones.
std::size_t tolerance(std::size_t length) {
    if (length <= 3) return 1;
    if (length <= 6) return 2;
    return length / 3;
}

}  // namespace

std::size_t editDistance(const std::string& a, const std::string& b) {
    const std::string x = lowered(a), y = lowered(b);
    const std::size_t n = x.size(), m = y.size();
    // Three rows suffice: the transposition step looks back two rows.
    std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
    for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
    for (std::size_t i = 1; i <= n; ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = x[i - 1] == y[j - 1] ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1])
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
        }
        prev2.swap(prev);
        prev.swap(cur);
    }
    return prev[m];
}

std::optional<std::string> closestMatch(const std::string& word, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t bestDistance = tolerance(word.size()) + 1;
    const std::string low = lowered(word);
    for (const std::string& candidate : candidates) {
        std::size_t d = editDistance(word, candidate);
        // A clear prefix ("batch" for "batch_size", "warmup" for "warmup_steps") is as good as a typo.
        if (low.size() >= 3 && lowered(candidate).rfind(low, 0) == 0) d = std::min<std::size_t>(d, 1);
        if (d < bestDistance) {
            best = candidate;
            bestDistance = d;
        }
    }
    return best;
}

std::string quotedList(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) {
        if (!out.empty()) out += ", ";
        out += "'" + item + "'";
    }
    return out;
}

}  // namespace trainbench::app
