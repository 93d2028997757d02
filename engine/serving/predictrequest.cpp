#include "engine/serving/predictrequest.h"

#include <nlohmann/json.hpp>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <sstream>

#include "engine/util/jsonlimits.h"

namespace trainbench::engine::serving {

namespace {

using json = nlohmann::json;

// Walks the events of one body. stack_[0] is the list of examples, stack_[k] the k-th dimension
// of the example being read; a {"INPUT_NAME": ...} wrapper sits around one example (row format)
// or around the whole list (columnar).
class RequestReader : public nlohmann::json_sax<json> {
public:
    RequestReader(std::string_view body, const Servable& s, int64_t maxInstances, PredictRequest& out)
        : body_(body), servable_(s), maxInstances_(maxInstances), out_(out) {}
    std::string error;

    bool null() override { return scalar("null"); }
    bool boolean(bool) override { return scalar("a boolean"); }
    bool number_integer(number_integer_t v) override { return number(static_cast<double>(v), nullptr); }
    bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v), nullptr); }
    bool number_float(number_float_t v, const string_t& text) override { return number(v, &text); }
    bool binary(binary_t&) override { return scalar("binary data"); }
    bool string(string_t& v) override {
        if (where_ != Where::Signature) return scalar("a string");
        if (v != "serving_default")
            return fail("signature_name: the model has no signature \"" + v + "\", only \"serving_default\"");
        where_ = Where::Keys;
        return true;
    }
    bool start_object(std::size_t) override {
        if (where_ == Where::Start) return (where_ = Where::Keys), true;
        if (where_ != Where::Payload) return unexpectedValue("an object");
        const size_t s = stack_.size();
        const bool wrapperPlace = wrapper_ == Wrapper::None &&
                                  (s == (out_.format == PredictRequest::Format::Row ? 1u : 0u));
        if (!wrapperPlace) return tensorMismatch("an object");
        countElement();
        if (!error.empty()) return false;
        wrapper_ = Wrapper::Open;
        wrapperDepth_ = s;
        return true;
    }
    bool key(string_t& k) override {
        if (where_ == Where::Keys) return topKey(k);
        if (wrapper_ == Wrapper::Open && k == servable_.inputName) return (wrapper_ = Wrapper::Keyed), true;
        return fail(path(stack_.size()) + ": unexpected key \"" + k + "\", expected only \"" + servable_.inputName +
                    "\" (the model's input)");
    }
    bool end_object() override {
        if (where_ == Where::Keys) {
            where_ = Where::End;
            return true;
        }
        if (wrapper_ != Wrapper::Filled)
            return fail(path(stack_.size()) + ": expected {\"" + servable_.inputName + "\": ...}, got {}");
        wrapper_ = Wrapper::None;
        return completed(wrapperDepth_);
    }
    bool start_array(std::size_t) override {
        if (where_ != Where::Payload) return unexpectedValue("a list");
        const size_t s = stack_.size();
        if (s > servable_.inputShape.size()) return tensorMismatch("a list");
        beginValue();
        if (!error.empty()) return false;
        stack_.push_back({0, s == 0 ? -1 : servable_.inputShape[s - 1]});
        return true;
    }
    bool end_array() override {
        const Level top = stack_.back();
        stack_.pop_back();
        if (top.expected >= 0 && top.count != top.expected) {
            const bool innermost = stack_.size() + 1 == servable_.inputShape.size() + 1;
            return fail(path(stack_.size() + 1, false) + ": expected " + std::to_string(top.expected) +
                        (innermost ? " numbers" : " lists") + ", got " + std::to_string(top.count));
        }
        if (top.expected < 0 && top.count == 0) return fail(path(0) + ": expected at least one instance, got none");
        return completed(stack_.size());
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
        // nlohmann's message repeats its own location; keep what follows it.
        std::string what = e.what();
        const size_t at = what.find("column ");
        const size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
        if (colon != std::string::npos) what = what.substr(colon + 2);
        const size_t offset = position > 0 ? std::min(position - 1, body_.size()) : 0;
        if (error.empty()) error = "malformed JSON at " + describeByteOffset(body_, offset) + ": " + what;
        return false;
    }

    bool finished() {
        if (!error.empty()) return false;
        if (!seenPayload_) return fail("expected \"instances\" (row format) or \"inputs\" (columnar format), got neither");
        return true;
    }

private:
    enum class Where { Start, Keys, Signature, Payload, End };
    enum class Wrapper { None, Open, Keyed, InValue, Filled };
    struct Level {
        int64_t count;
        int64_t expected;  // -1: the list of examples
    };

    bool fail(std::string message) {
        if (error.empty()) error = std::move(message);
        return false;
    }
    const char* payloadName() const { return out_.format == PredictRequest::Format::Row ? "instances" : "inputs"; }
    // The field being read: the payload's name and the index of the element open at each level
    // below `depth` (its last counted element); `inside`: also the element just counted at `depth`.
    std::string path(size_t depth, bool inside = true) const {
        std::string p = payloadName();
        const size_t n = inside ? depth : depth - 1;
        for (size_t i = 0; i < n && i < stack_.size(); ++i) p += "[" + std::to_string(stack_[i].count - 1) + "]";
        return p;
    }

    bool topKey(const std::string& k) {
        if (k == "signature_name") return (where_ = Where::Signature), true;
        if (k != "instances" && k != "inputs")
            return fail("unknown key \"" + k + "\": expected \"instances\" or \"inputs\" (and optionally \"signature_name\")");
        if (seenPayload_) return fail("\"" + k + "\": the body already holds " + payloadName() + "; expected only one of them");
        seenPayload_ = true;
        out_.format = k == "instances" ? PredictRequest::Format::Row : PredictRequest::Format::Columnar;
        where_ = Where::Payload;
        return true;
    }

    // A value starts at stack_.size(): an element of the level above, or the wrapped one.
    void beginValue() {
        if (wrapper_ == Wrapper::Keyed && wrapperDepth_ == stack_.size()) {
            wrapper_ = Wrapper::InValue;
            return;
        }
        countElement();
    }
    void countElement() {
        if (stack_.empty()) return;
        Level& top = stack_.back();
        ++top.count;
        if (top.expected < 0 && top.count > maxInstances_)
            fail(std::string(payloadName()) + ": more than " + std::to_string(maxInstances_) +
                 " instances, the most one request may hold (max_batch_size)");
        else if (top.expected >= 0 && top.count > top.expected)
            fail(path(stack_.size() - 1) + ": expected " + std::to_string(top.expected) +
                 (stack_.size() == servable_.inputShape.size() + 1 ? " numbers" : " lists") + ", got more");
    }
    // The value that started at `depth` is complete.
    bool completed(size_t depth) {
        if (wrapper_ == Wrapper::InValue && wrapperDepth_ == depth) wrapper_ = Wrapper::Filled;
        else if (depth == 0 && wrapper_ == Wrapper::None) where_ = Where::Keys;
        return true;
    }

    bool number(double v, const std::string* text) {
        if (where_ != Where::Payload) return unexpectedValue("a number");
        if (stack_.size() != servable_.inputShape.size() + 1) return tensorMismatch("a number");
        beginValue();
        if (!error.empty()) return false;
        if (!(std::fabs(v) <= FLT_MAX))
            return fail(path(stack_.size()) + ": " + (text ? *text : std::to_string(v)) + " is outside the float range");
        out_.data.push_back(static_cast<float>(v));
        return completed(stack_.size());
    }
    bool scalar(const char* kind) {
        if (where_ != Where::Payload) return unexpectedValue(kind);
        return tensorMismatch(kind);
    }
    bool unexpectedValue(const char* kind) {
        if (where_ == Where::Signature) return fail(std::string("signature_name: expected a string, got ") + kind);
        if (where_ == Where::Start)
            return fail(std::string("expected a JSON object with \"instances\" or \"inputs\", got ") + kind);
        return fail(std::string("unexpected ") + kind);
    }
    // A value of the wrong kind where the tensor continues: say what the place expects.
    bool tensorMismatch(const char* got) {
        const size_t s = stack_.size();
        const size_t rank = servable_.inputShape.size();
        if (wrapper_ != Wrapper::Keyed || wrapperDepth_ != s) countElement();
        std::string expected;
        if (s == 0) expected = "a list of instances";
        else if (s == rank + 1) expected = "a number";
        else if (s == rank) expected = "a list of " + std::to_string(servable_.inputShape[s - 1]) + " numbers";
        else expected = "a list of " + std::to_string(servable_.inputShape[s - 1]) + " lists";
        return fail(path(s) + ": expected " + expected + ", got " + got);
    }

    std::string_view body_;
    const Servable& servable_;
    const int64_t maxInstances_;
    PredictRequest& out_;
    Where where_ = Where::Start;
    bool seenPayload_ = false;
    std::vector<Level> stack_;
    Wrapper wrapper_ = Wrapper::None;
    size_t wrapperDepth_ = 0;
};

// The common body — {"instances": [EXAMPLE, ...]}, each example nested lists of plain JSON numbers
// in exactly the servable's shape, nothing else — read straight into floats without the SAX
// machinery (a 784-pixel image in a fifth of the time). Each number is read as the SAX path reads
// it (to double, correctly rounded, then to float), so the floats are the same. Anything else —
// other keys, a wrapper object, columnar, a wrong shape, a number outside the float range, malformed
// JSON — makes it give up (false) and the full decoder reads the body and names what is wrong.
class FastReader {
public:
    FastReader(std::string_view body, const Servable& s, int64_t maxInstances, PredictRequest& out)
        : p_(body.data()), end_(body.data() + body.size()), shape_(s.inputShape), max_(maxInstances), out_(out) {}

    bool read() {
        if (shape_.empty()) return false;
        if (!take('{') || !literal("\"instances\"") || !take(':') || !take('[')) return false;
        int64_t instances = 0;
        for (;;) {
            if (++instances > max_) return false;
            if (!level(0)) return false;
            skip();
            if (p_ < end_ && *p_ == ',') {
                ++p_;
                continue;
            }
            break;
        }
        if (!take(']') || !take('}')) return false;
        skip();
        return p_ == end_;
    }

private:
    void skip() {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }
    bool take(char c) {
        skip();
        if (p_ >= end_ || *p_ != c) return false;
        ++p_;
        return true;
    }
    bool literal(std::string_view text) {
        skip();
        if (static_cast<size_t>(end_ - p_) < text.size() || std::string_view(p_, text.size()) != text) return false;
        p_ += text.size();
        return true;
    }
    bool level(size_t dim) {
        if (!take('[')) return false;
        const int64_t n = shape_[dim];
        const bool innermost = dim + 1 == shape_.size();
        for (int64_t i = 0; i < n; ++i) {
            if (i > 0 && !take(',')) return false;
            if (!(innermost ? number() : level(dim + 1))) return false;
        }
        return take(']');
    }
    // JSON's number grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, then from_chars.
    bool number() {
        skip();
        const char* q = p_;
        if (q < end_ && *q == '-') ++q;
        if (q >= end_) return false;
        if (*q == '0') {
            ++q;
        } else if (*q >= '1' && *q <= '9') {
            while (q < end_ && *q >= '0' && *q <= '9') ++q;
        } else {
            return false;
        }
        bool integer = true;  // the SAX parser reads "-0" as the integer 0, so +0.0
        if (q < end_ && *q == '.') {
            integer = false;
            const char* digits = ++q;
            while (q < end_ && *q >= '0' && *q <= '9') ++q;
            if (q == digits) return false;
        }
        if (q < end_ && (*q == 'e' || *q == 'E')) {
            integer = false;
            ++q;
            if (q < end_ && (*q == '+' || *q == '-')) ++q;
            const char* digits = q;
            while (q < end_ && *q >= '0' && *q <= '9') ++q;
            if (q == digits) return false;
        }
        double v = 0;
        const auto [used, ec] = std::from_chars(p_, q, v);
        if (ec != std::errc() || used != q || !(std::fabs(v) <= FLT_MAX)) return false;
        if (integer && v == 0) v = 0.0;
        out_.data.push_back(static_cast<float>(v));
        p_ = q;
        return true;
    }

    const char* p_;
    const char* end_;
    const std::vector<int64_t>& shape_;
    const int64_t max_;
    PredictRequest& out_;
};

}  // namespace

// A model of token ids: each number an integer row of its table (ONNX's Gather also takes -rows..-1).
// The place is named in the row format's terms, instances[i][j...].
std::string checkIds(const PredictRequest& r, const Servable& servable) {
    if (servable.id_rows <= 0) return {};
    const auto rows = static_cast<float>(servable.id_rows);
    for (size_t i = 0; i < r.data.size(); ++i) {
        const float v = r.data[i];
        if (v == std::floor(v) && v >= -rows && v < rows) continue;
        auto rest = static_cast<int64_t>(i);
        std::string place;
        for (size_t d = servable.inputShape.size(); d-- > 0;) {
            place = "[" + std::to_string(rest % servable.inputShape[d]) + "]" + place;
            rest /= servable.inputShape[d];
        }
        std::ostringstream text;
        text << v;
        return "instances[" + std::to_string(rest) + "]" + place + ": " + text.str() +
               " is not a token id of this model (an integer from " + std::to_string(-servable.id_rows) + " to " +
               std::to_string(servable.id_rows - 1) + ")";
    }
    return {};
}

std::string decodePredictRequest(std::string_view body, const Servable& servable, int64_t maxInstances,
                                 PredictRequest& out) {
    out = PredictRequest{};
    if (body.empty()) return "the body is empty; expected {\"instances\": [...]} or {\"inputs\": ...}";
    if (FastReader(body, servable, maxInstances, out).read()) {
        out.size = static_cast<int64_t>(out.data.size()) / std::max<int64_t>(1, servable.exampleSize());
        return checkIds(out, servable);
    }
    out = PredictRequest{};
    RequestReader reader(body, servable, maxInstances, out);
    const bool ok = json::sax_parse(body.begin(), body.end(), &reader);
    if (ok && reader.finished()) {
        out.size = static_cast<int64_t>(out.data.size()) / std::max<int64_t>(1, servable.exampleSize());
        return checkIds(out, servable);
    }
    return reader.error.empty() ? "malformed JSON" : reader.error;
}

}  // namespace trainbench::engine::serving
