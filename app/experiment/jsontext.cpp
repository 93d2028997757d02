#include "app/experiment/jsontext.h"
#include "engine/util/keypath.h"

#include <cctype>
#include <set>
#include <vector>

namespace trainbench::app {
namespace {

using nlohmann::json;

// Follows the parser's events to know the key path of every key, so a duplicate can be named.
class DuplicateKeyFinder {
public:
    explicit DuplicateKeyFinder(IssueList& issues) : issues_(issues) {}

    bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
                countArrayElement();
                frames_.push_back({false, {}, {}, -1});
                break;
            case json::parse_event_t::array_start:
                countArrayElement();
                frames_.push_back({true, {}, {}, -1});
                break;
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                if (!frames_.empty()) frames_.pop_back();
                break;
            case json::parse_event_t::key: {
                Frame& top = frames_.back();
                top.key = parsed.get<std::string>();
                if (!top.keys.insert(top.key).second)
                    issues_.add(currentPath(), "duplicate key; only its last value would be used, so remove the others");
                break;
            }
            case json::parse_event_t::value: countArrayElement(); break;
        }
        return true;
    }

private:
    struct Frame {
        bool isArray;
        std::set<std::string> keys;
        std::string key;
        long index;
    };

    void countArrayElement() {
        if (!frames_.empty() && frames_.back().isArray) ++frames_.back().index;
    }

    std::string currentPath() const {
        std::string path;
        for (const Frame& f : frames_) {
            path = f.isArray ? engine::keyPathElement(path, static_cast<std::size_t>(f.index))
                             : engine::keyPathMember(path, f.key);
        }
        return path;
    }

    IssueList& issues_;
    std::vector<Frame> frames_;
};

// nlohmann's message is "[json.exception.parse_error.101] parse error at line 7, column 3: syntax
// error while parsing object - unexpected '}'; ..."; keep what follows the position.
std::string syntaxMessage(const std::string& what) {
    const auto column = what.find("column ");
    if (column != std::string::npos) {
        const auto colon = what.find(": ", column);
        if (colon != std::string::npos) return what.substr(colon + 2);
    }
    const auto colon = what.find(": ");
    return colon == std::string::npos ? what : what.substr(colon + 2);
}

// Where the token that ends at offset `last` starts. nlohmann reports an out-of-place token
// ("unexpected string literal") at its last character; editors and users expect its first.
std::size_t tokenStart(const std::string& text, std::size_t last) {
    const auto isWordChar = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.';
    };
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
        if (i > last || i >= text.size()) break;
        const std::size_t start = i;
        if (text[i] == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
            ++i;
        } else if (isWordChar(text[i])) {
            while (i < text.size() && isWordChar(text[i])) ++i;
        } else {
            ++i;
        }
        if (last < i) return start;
    }
    return last;
}

}  // namespace

TextPosition textPosition(const std::string& text, std::size_t byteOffset) {
    TextPosition pos;
    const std::size_t end = std::min(byteOffset, text.size());
    for (std::size_t i = 0; i < end; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++pos.line;
            pos.column = 1;
        } else if ((c & 0xC0) != 0x80) {  // count UTF-8 characters, not continuation bytes
            ++pos.column;
        }
    }
    return pos;
}

std::optional<LimitIssue> checkExperimentLimits(const std::string& text) {
    const auto v = engine::checkJsonLimits(text, kExperimentLimits);
    if (!v) return std::nullopt;
    if (v->limit == engine::JsonLimitViolation::Limit::Size) return LimitIssue{v->offset, "is " + v->message};
    return LimitIssue{v->offset, v->message + " (byte " + std::to_string(v->offset) +
                                     (v->keyPath.empty() ? std::string() : ", at " + v->keyPath) + ")"};
}

json parseJsonText(const std::string& text, const std::string& sourceName, IssueList& issues) {
    // Before the parser: nothing of a text over the limits is parsed, copied or validated.
    if (const auto limit = checkExperimentLimits(text)) {
        if (text.size() > kExperimentLimits.maxBytes) {
            issues.add("", limit->message);
        } else {
            const TextPosition pos = textPosition(text, limit->offset);
            issues.add(sourceName + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column), limit->message);
        }
        return json(json::value_t::discarded);
    }
    // Issues from the callback are only kept if the whole text parses; a syntax error comes first.
    IssueList duplicates;
    try {
        json doc = json::parse(text, DuplicateKeyFinder(duplicates), /*allow_exceptions=*/true, /*ignore_comments=*/false);
        for (const ExperimentIssue& issue : duplicates.items()) issues.add(issue.where, issue.message);
        return doc;
    } catch (const json::parse_error& e) {
        // e.byte is the 1-based index of the character where parsing failed.
        const std::string message = syntaxMessage(e.what());
        std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
        // "unexpected <token>" means a whole, well-formed token was read; lexer errors ("invalid
        // literal", "ill-formed UTF-8 byte") are best shown where the lexer stopped.
        if (message.find(" - unexpected ") != std::string::npos && offset < text.size()) offset = tokenStart(text, offset);
        const TextPosition pos = textPosition(text, offset);
        issues.add(sourceName + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column), message);
        return json(json::value_t::discarded);
    }
}

}  // namespace trainbench::app
