#pragma once
// Framed, versioned messages over a byte stream (TCP): what the parameter servers, their workers and
// the coordinator speak. Every frame is a 16-byte header and its payload:
//
//   offset 0   u32 LE  magic 0x53504254 ("TBPS" on the wire)
//   offset 4   u16 LE  protocol version (kVersion)
//   offset 6   u16 LE  message type (1 .. kMaxType)
//   offset 8   u64 LE  payload length, at most the receiver's cap
//
// A receiver checks every header before it reads (or allocates for) the payload; anything wrong
// closes the connection with a ProtocolError that names the problem and its byte offset in the
// stream. Payload fields are little-endian; strings and float arrays are a u32 / u64 count first.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainbench::engine::framing {

inline constexpr uint32_t kMagic = 0x53504254;
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 16;
inline constexpr uint16_t kMaxType = 64;                        // types 1 .. 64 are defined by users of this
inline constexpr uint64_t kDefaultMaxPayload = uint64_t{1} << 30;  // 1 GiB: a 256 M-parameter shard

struct Frame {
    uint16_t type = 0;
    std::vector<uint8_t> payload;
};

// The bytes of one frame.
std::string encode(uint16_t type, std::string_view payload);

// Turns a byte stream into frames, whatever pieces it arrives in.
class FrameDecoder {
public:
    explicit FrameDecoder(uint64_t maxPayload = kDefaultMaxPayload) : maxPayload_(maxPayload) {}
    // Consumes n bytes and appends the frames they complete to `out`. Throws ProtocolError for a bad
    // header (magic, version, type, length over the cap), naming its byte offset in the stream;
    // the decoder refuses everything after that.
    void feed(const uint8_t* data, size_t n, std::vector<Frame>& out);
    // The stream ended: throws ProtocolError if it ended inside a frame.
    void finish() const;
    uint64_t offset() const { return offset_; }  // bytes consumed so far
    // The cap for frames whose header is still to come: a server keeps it small until the peer has
    // said who it is, so that a stranger cannot make it buffer a gigabyte.
    void setMaxPayload(uint64_t maxPayload) { maxPayload_ = maxPayload; }

private:
    [[noreturn]] void fail(const std::string& what);
    uint64_t maxPayload_;
    uint64_t offset_ = 0;       // stream bytes consumed
    uint64_t frameStart_ = 0;   // stream offset of the frame being read
    uint8_t header_[kHeaderBytes] = {};
    size_t headerHave_ = 0;
    bool inPayload_ = false;
    Frame current_;
    uint64_t payloadWant_ = 0;
    bool failed_ = false;
};

// Builds a payload.
class PayloadWriter {
public:
    PayloadWriter& u32(uint32_t v);
    PayloadWriter& u64(uint64_t v);
    PayloadWriter& f64(double v);
    PayloadWriter& str(std::string_view s);                // u32 length + bytes
    PayloadWriter& floats(const float* p, uint64_t n);     // u64 count + n float32
    PayloadWriter& int32s(const int32_t* p, uint64_t n);   // u64 count + n int32
    const std::string& data() const { return buf_; }

private:
    std::string buf_;
};

// Reads a payload; a field that runs past its end throws ProtocolError naming the message type and
// the field. Counts are checked against the bytes left before anything is allocated.
class PayloadReader {
public:
    PayloadReader(const Frame& frame, const char* typeName);
    uint32_t u32(const char* field);
    uint64_t u64(const char* field);
    double f64(const char* field);
    std::string str(const char* field, uint32_t maxBytes);
    // Reads a float array into `out` (resized); `expected` (if not -1) must equal its count.
    void floats(const char* field, std::vector<float>& out, int64_t expected = -1);
    void int32s(const char* field, std::vector<int32_t>& out, int64_t expected = -1);
    // Throws if bytes are left over (a message from a newer or broken peer).
    void end();

private:
    const uint8_t* take(size_t n, const char* field);
    template <class T>
    void array(const char* field, const char* what, std::vector<T>& out, int64_t expected);
    const uint8_t* p_;
    const uint8_t* end_;
    std::string typeName_;
};

}  // namespace trainbench::engine::framing
