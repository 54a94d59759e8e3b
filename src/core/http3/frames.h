// HTTP/3 framing (RFC 9114 section 7), SETTINGS, and the per-stream frame
// rules (sections 4.1, 6.2, 7.2) as small state machines the QUIC
// transport feeds with stream bytes. No QUIC, TLS or event loop here: the
// transport owns the streams and calls in; every class below works on
// whatever read boundaries it is given and holds at most one bounded frame
// (a HEADERS or control frame) of its own.
//
// Errors are H3Error codes (RFC 9114 section 8.1). Which ones close the
// connection and which only the stream: IsStreamError().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice::http3 {

enum class FrameType : uint64_t {
  kData = 0x0,
  kHeaders = 0x1,
  kCancelPush = 0x3,
  kSettings = 0x4,
  kPushPromise = 0x5,
  kGoaway = 0x7,
  kMaxPushId = 0xd
};

enum class H3Error : uint64_t {
  kNoError = 0x100,
  kGeneralProtocol = 0x101,
  kInternal = 0x102,
  kStreamCreation = 0x103,
  kClosedCriticalStream = 0x104,
  kFrameUnexpected = 0x105,
  kFrame = 0x106,
  kExcessiveLoad = 0x107,
  kId = 0x108,
  kSettings = 0x109,
  kMissingSettings = 0x10a,
  kRequestRejected = 0x10b,
  kRequestCancelled = 0x10c,
  kRequestIncomplete = 0x10d,
  kMessage = 0x10e,
  kConnect = 0x10f,
  kVersionFallback = 0x110,
  kQpackDecompressionFailed = 0x200,
  kQpackEncoderStream = 0x201,
  kQpackDecoderStream = 0x202
};

// "H3_FRAME_UNEXPECTED", ...; "H3_UNKNOWN" for a value not listed above.
const char* H3ErrorName(H3Error e);

// HTTP/2 error codes (the vocabulary lib/ speaks for both protocols) to
// HTTP/3's and back (RFC 9114 appendix A.4): NO_ERROR, PROTOCOL_ERROR,
// INTERNAL_ERROR, REFUSED_STREAM and CANCEL map; any other HTTP/2 code
// becomes H3_INTERNAL_ERROR, any other HTTP/3 code passes unchanged.
uint64_t H3CodeOfHttp2(uint32_t code);
uint64_t Http2CodeOfH3(uint64_t code);

// True for the errors this core reports as stream errors (reset the one
// request stream with the code, the connection goes on): H3_REQUEST_
// INCOMPLETE, H3_MESSAGE_ERROR, H3_REQUEST_REJECTED, H3_REQUEST_CANCELLED,
// H3_CONNECT_ERROR. Every other code it returns closes the connection
// (CONNECTION_CLOSE with the code).
bool IsStreamError(H3Error e);

// Reserved ("GREASE") values of frame types, unidirectional stream types,
// settings identifiers and error codes: 0x1f * N + 0x21 (RFC 9114 sections
// 6.2.3, 7.2.8, 7.2.4.1, 8.1). Received ones are ignored.
inline bool IsReservedValue(uint64_t v) {
  return v >= 0x21 && (v - 0x21) % 0x1f == 0;
}

// HTTP/2 frame types with no HTTP/3 counterpart: PRIORITY 0x2, PING 0x6,
// WINDOW_UPDATE 0x8, CONTINUATION 0x9. Receiving one on any stream is
// H3_FRAME_UNEXPECTED (RFC 9114 section 7.2.8).
inline bool IsHttp2OnlyFrameType(uint64_t t) {
  return t == 0x2 || t == 0x6 || t == 0x8 || t == 0x9;
}

// Unidirectional stream types (RFC 9114 section 6.2, RFC 9204 section 4.2).
// The type is the stream's first varint; reserved types (IsReservedValue)
// and unknown ones are ignored by the receiver.
enum class UniStreamType : uint64_t {
  kControl = 0x00,
  kPush = 0x01,
  kQpackEncoder = 0x02,
  kQpackDecoder = 0x03
};

// Settings identifiers (RFC 9114 section 7.2.4.1, RFC 9204 section 5,
// RFC 9220 section 3, RFC 9297 section 2.1.1).
constexpr uint64_t kSettingQpackMaxTableCapacity = 0x01;
constexpr uint64_t kSettingMaxFieldSectionSize = 0x06;
constexpr uint64_t kSettingQpackBlockedStreams = 0x07;
constexpr uint64_t kSettingEnableConnectProtocol = 0x08;
constexpr uint64_t kSettingH3Datagram = 0x33;

// Incremental reader of a sequence of frames on one stream (request stream
// or control stream; the bytes after a unidirectional stream's type). It
// splits frames and checks only what holds on every stream: the frame
// header's varints and, for known non-DATA frame types, the length bound.
// Which frames may come where is the stream readers' business (below).
class FrameReader {
 public:
  // Called synchronously from Feed(); data pointers are valid only during
  // the call (they point into Feed's input: no copy is made here). A
  // return other than kNoError stops Feed, which returns it; the reader is
  // then dead. Must not call Feed on the same reader.
  struct Listener {
    virtual ~Listener() = default;
    // Any frame, before its payload, once its type and length are read.
    virtual H3Error OnFrameHeader(uint64_t type, uint64_t length) = 0;
    // The payload in order, in pieces as the input came: the last piece
    // has frame_end. A zero-length frame gets one call (len 0, frame_end),
    // so every frame ends with exactly one frame_end call.
    virtual H3Error OnFramePayload(uint64_t type, const uint8_t* data,
                                   size_t len, bool frame_end) = 0;
  };

  // max_nondata_frame_size bounds the length of known frame types other
  // than DATA (HEADERS, SETTINGS, GOAWAY, ...), the ones a reader buffers:
  // a larger length is H3_EXCESSIVE_LOAD before any payload is read.
  // Unknown and reserved frames are streamed through at any length.
  explicit FrameReader(Listener* l, uint64_t max_nondata_frame_size = 64 * 1024);

  // Reads [data, data + len), any split. Returns kNoError, or the first
  // error (the listener's or the reader's); after an error the reader is
  // dead and every later Feed returns that error again.
  H3Error Feed(const uint8_t* data, size_t len);

  // True between frames (no partial header or payload held): a stream's
  // FIN elsewhere is a truncated frame, H3_FRAME_ERROR (RFC 9114 7.1).
  bool AtFrameBoundary() const;

  bool dead() const { return error_ != H3Error::kNoError; }
  H3Error error() const { return error_; }

 private:
  enum class State : uint8_t { kType, kLength, kPayload };
  // Reads one varint that may straddle reads; returns false when it needs
  // more input (the bytes so far are held in partial_).
  bool TakeVarint(const uint8_t** p, const uint8_t* end, uint64_t* out);
  H3Error Fail(H3Error e) { return error_ = e; }

  Listener* listener_;
  uint64_t max_nondata_;
  State state_ = State::kType;
  uint8_t partial_[8];
  uint8_t partial_len_ = 0;
  uint64_t type_ = 0;
  uint64_t left_ = 0;  // payload bytes still to come (kPayload)
  H3Error error_ = H3Error::kNoError;
};

// Writes a frame header (type and length varints). Returns its size.
size_t WriteFrameHeader(uint8_t* out /*>=16*/, uint64_t type, uint64_t length);

struct Settings {
  uint64_t max_field_section_size = UINT64_MAX;  // absent: unlimited
  uint64_t qpack_max_table_capacity = 0;
  uint64_t qpack_blocked_streams = 0;
  bool enable_connect_protocol = false;
  bool h3_datagram = false;
};

// Parses a SETTINGS payload. A repeated identifier (any, known or not),
// an HTTP/2-only identifier (0x2..0x5) or a boolean setting (0x08, 0x33)
// other than 0/1 → H3_SETTINGS_ERROR; a payload that ends inside a varint
// or has an identifier without its value → H3_FRAME_ERROR; unknown and
// reserved identifiers are ignored. *out starts from the defaults.
H3Error ParseSettings(const uint8_t* payload, size_t len, Settings* out);

// Appends the SETTINGS payload (no frame header) for every field not at
// its default, in identifier order.
void SerializeSettings(const Settings& s, std::string* out);

// Appends a whole SETTINGS frame (header and payload).
void AppendSettingsFrame(const Settings& s, std::string* out);
// Appends a GOAWAY frame carrying id (a server sends the first client
// bidirectional stream id it will not process: RFC 9114 section 5.2).
void AppendGoawayFrame(uint64_t id, std::string* out);

// Reads the type varint at the start of a peer's unidirectional stream,
// across reads.
class UniStreamTypeReader {
 public:
  // Consumes at most the type's bytes from [data, data + len); returns how
  // many it took. Once done(), the rest of the stream belongs to the
  // stream's reader (ControlStreamReader, QPACK stream readers, ...).
  size_t Feed(const uint8_t* data, size_t len);
  bool done() const { return done_; }
  uint64_t type() const { return type_; }

 private:
  uint8_t partial_[8];
  uint8_t partial_len_ = 0;
  bool done_ = false;
  uint64_t type_ = 0;
};

// What a peer's unidirectional stream is for, and the one-of-each rule
// (RFC 9114 section 6.2, RFC 9204 section 4.2). One per connection,
// owned by the transport.
class PeerUniStreams {
 public:
  enum class Kind { kControl, kPush, kQpackEncoder, kQpackDecoder, kIgnored };
  // peer_is_client: the usual server side (a client must not open a push
  // stream: H3_STREAM_CREATION_ERROR).
  explicit PeerUniStreams(bool peer_is_client = true)
      : peer_is_client_(peer_is_client) {}
  // Called by the transport once a stream's type is read. A second
  // control, QPACK encoder or QPACK decoder stream → H3_STREAM_CREATION_
  // ERROR; a push stream from a client likewise. Unknown and reserved
  // types give kIgnored (the transport may STOP_SENDING them with
  // H3_STREAM_CREATION_ERROR and must discard their data). The control
  // and QPACK streams are critical: their end (FIN or reset) is
  // H3_CLOSED_CRITICAL_STREAM (CriticalStreamClosed()).
  H3Error Open(uint64_t type, Kind* kind);
  static H3Error CriticalStreamClosed() {
    return H3Error::kClosedCriticalStream;
  }
  bool has_control() const { return control_; }

 private:
  bool peer_is_client_;
  bool control_ = false;
  bool encoder_ = false;
  bool decoder_ = false;
};

// The peer's control stream (after its type byte): SETTINGS first and only
// once, then GOAWAY / MAX_PUSH_ID / CANCEL_PUSH with their ID rules; DATA,
// HEADERS, PUSH_PROMISE and HTTP/2-only types → H3_FRAME_UNEXPECTED;
// anything else first → H3_MISSING_SETTINGS; unknown and reserved types
// skipped. Control frames are at most max_frame_size bytes
// (H3_EXCESSIVE_LOAD) and are buffered here until complete.
class ControlStreamReader : private FrameReader::Listener {
 public:
  enum class Role { kServer, kClient };  // the side that reads
  // Called synchronously from Feed() once a frame is complete and passed
  // the rules above; a non-kNoError return becomes Feed's result.
  struct Delegate {
    virtual ~Delegate() = default;
    // The peer's SETTINGS, once, before any other callback.
    virtual H3Error OnSettings(const Settings& s) = 0;
    // GOAWAY: a server's is a client bidirectional stream id (id % 4 == 0,
    // never larger than a previous one); a client's is a push id (never
    // larger than a previous one). Checked here (H3_ID_ERROR).
    virtual H3Error OnGoaway(uint64_t id) = 0;
    // MAX_PUSH_ID (server role only; never smaller than before: checked).
    // A server that never pushes can ignore it.
    virtual H3Error OnMaxPushId(uint64_t) { return H3Error::kNoError; }
    // CANCEL_PUSH (client role: a server cancelled a promised push). In the
    // server role CANCEL_PUSH is H3_ID_ERROR here: a server without push
    // has mentioned no push id.
    virtual H3Error OnCancelPush(uint64_t) { return H3Error::kNoError; }
  };

  explicit ControlStreamReader(Delegate* d, Role role = Role::kServer,
                               uint64_t max_frame_size = 16 * 1024);
  // Stream bytes after the type varint, any split.
  H3Error Feed(const uint8_t* data, size_t len) { return reader_.Feed(data, len); }
  // The stream ended (FIN or reset): always H3_CLOSED_CRITICAL_STREAM.
  H3Error OnFin() const { return H3Error::kClosedCriticalStream; }
  bool settings_received() const { return settings_seen_; }

 private:
  H3Error OnFrameHeader(uint64_t type, uint64_t length) override;
  H3Error OnFramePayload(uint64_t type, const uint8_t* data, size_t len,
                         bool frame_end) override;
  H3Error OnControlFrame(uint64_t type, const uint8_t* p, size_t len);

  Delegate* delegate_;
  Role role_;
  FrameReader reader_;
  std::string frame_;  // the control frame being gathered
  bool settings_seen_ = false;
  bool goaway_seen_ = false;
  uint64_t last_goaway_ = 0;
  bool max_push_seen_ = false;
  uint64_t max_push_id_ = 0;
};

// A request stream as the server reads it (RFC 9114 sections 4.1, 7.2):
// HEADERS first (DATA or anything but unknown frames before it →
// H3_FRAME_UNEXPECTED), then DATA frames, then optionally one trailing
// HEADERS and nothing known after it (H3_FRAME_UNEXPECTED).
// PUSH_PROMISE, SETTINGS, GOAWAY, MAX_PUSH_ID, CANCEL_PUSH and HTTP/2-only
// types → H3_FRAME_UNEXPECTED; unknown and reserved types skipped. A
// HEADERS payload is buffered here (at most max_headers_size bytes, else
// H3_EXCESSIVE_LOAD) and handed over whole; DATA payload is passed through
// in the pieces it came in, without a copy. Interim (1xx) responses do not
// exist in this direction, so no second leading HEADERS is expected.
class RequestStreamFramer : private FrameReader::Listener {
 public:
  enum class State { kHead, kBody, kTrailersDone };
  // Called synchronously from Feed(); pointers are valid during the call.
  // A non-kNoError return becomes Feed's result (the delegate's own
  // H3_MESSAGE_ERROR for a bad field section, say). May not call Feed.
  struct Delegate {
    virtual ~Delegate() = default;
    // A complete HEADERS payload (a QPACK field section: decode it with
    // DecodeFieldSection). trailers: it follows the body.
    virtual H3Error OnHeaders(const uint8_t* block, size_t len, bool trailers) = 0;
    // Body bytes from DATA frames, in order; len > 0.
    virtual H3Error OnData(const uint8_t* data, size_t len) = 0;
  };

  explicit RequestStreamFramer(Delegate* d, uint64_t max_headers_size = 64 * 1024);
  // Stream bytes, any split.
  H3Error Feed(const uint8_t* data, size_t len) { return reader_.Feed(data, len); }
  // The client ended the stream (FIN). Mid-frame → H3_FRAME_ERROR (a
  // connection error); before the request HEADERS →
  // H3_REQUEST_INCOMPLETE (a stream error); else kNoError. After an
  // earlier error it returns that error.
  H3Error OnFin() const;
  State state() const { return state_; }

 private:
  H3Error OnFrameHeader(uint64_t type, uint64_t length) override;
  H3Error OnFramePayload(uint64_t type, const uint8_t* data, size_t len,
                         bool frame_end) override;

  Delegate* delegate_;
  FrameReader reader_;
  std::string block_;  // the HEADERS payload being gathered
  State state_ = State::kHead;
};

}  // namespace sluice::http3
