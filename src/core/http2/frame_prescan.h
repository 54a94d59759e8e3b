// FramePrescan: reads the frame layout of an HTTP/2 server's input ahead of
// nghttp2, so the session can decide about a frame before nghttp2 sees it
// and answer as RFC 9113 requires whatever nghttp2 version runs.
//
// Why: node 22+ carry an nghttp2 (1.69, 1.70) that keeps no closed streams
// and no longer reads PRIORITY frames, so it drops a DATA frame on a
// stream it has forgotten before any callback, accepts a PRIORITY that
// depends on itself, and answers a stream WINDOW_UPDATE overflow with a
// connection error where a stream error is due. Only the frame header (and
// the 4 or 5 payload bytes of WINDOW_UPDATE and PRIORITY) is needed to
// decide; this class finds those in the byte stream, across reads, and
// hands the rest through untouched.
//
// Contract: Scan passes every input byte to Sink::Feed in order, except
// frames the sink drops; before asking about a frame (OnFrame) it has fed
// every byte in front of it, so the sink's protocol state (nghttp2's) is
// exactly as of that frame. A frame header or peeked payload split across
// reads is held here (at most 14 bytes) until it is complete; so is the
// client preface's place (the first 24 bytes pass without a look). Inside
// a header block (HEADERS/PUSH_PROMISE without END_HEADERS until the
// CONTINUATION with it) no frame is asked about: anything but CONTINUATION
// there is nghttp2's connection error to raise. Pure C++, no nghttp2.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

// One frame the sink is asked about. Valid during OnFrame only.
struct PrescanFrame {
  uint32_t length;         // payload length from the header
  uint8_t type;            // RFC 9113 frame type
  uint8_t flags;
  int32_t stream_id;       // reserved bit cleared
  const uint8_t* payload;  // the first `peeked` payload bytes
  size_t peeked;           // 5: a PRIORITY of length 5; 4: a WINDOW_UPDATE
                           // on a stream, of length 4; otherwise 0
};

class FramePrescan {
 public:
  enum Action {
    kPass,  // feed the frame as it is
    kDrop,  // skip the frame's bytes (the sink answered it)
    kStop,  // feed nothing more, ever (a connection error)
  };
  class Sink {
   public:
    virtual ~Sink() = default;
    // Scan → sink: the next `len` input bytes for the protocol engine, in
    // order. `data` is valid during the call only (the read's memory or
    // this scanner's small buffer). Returns false when the engine takes no
    // more input (the connection failed): Scan stops for good.
    virtual bool Feed(const uint8_t* data, size_t len) = 0;
    // Scan → sink, for DATA, HEADERS, PRIORITY and stream WINDOW_UPDATE
    // frames outside a header block, once every byte before the frame has
    // been fed. May submit output, close streams or terminate the session;
    // must not call Scan.
    virtual Action OnFrame(const PrescanFrame& f) = 0;
  };

  // Frame types (RFC 9113 6).
  static constexpr uint8_t kData = 0x0;
  static constexpr uint8_t kHeaders = 0x1;
  static constexpr uint8_t kPriority = 0x2;
  static constexpr uint8_t kPushPromise = 0x5;
  static constexpr uint8_t kWindowUpdate = 0x8;
  static constexpr uint8_t kContinuation = 0x9;
  static constexpr uint8_t kFlagEndHeaders = 0x4;
  static constexpr size_t kHeaderSize = 9;
  static constexpr size_t kPrefaceSize = 24;

  // `preface`: the input starts with the 24-byte client connection
  // preface (a server session always; tests may start at a frame).
  explicit FramePrescan(bool preface = true)
      : state_(preface ? kPassBytes : kHead),
        left_(preface ? kPrefaceSize : 0) {}

  // Reads [data, len) (valid during the call only), feeding and asking
  // `sink` as described above.
  void Scan(const uint8_t* data, size_t len, Sink& sink);

  // After kStop or a failed Feed: nothing is fed any more.
  bool stopped() const { return state_ == kStopped; }

 private:
  enum State { kHead, kPassBytes, kSkipBytes, kStopped };
  // Whether the sink is asked about a frame of this type and stream.
  bool Asks(uint8_t type, int32_t stream_id) const;
  // How many payload bytes of an asked-about frame are peeked.
  static size_t PeekLength(uint8_t type, uint32_t length, int32_t stream_id);
  // Header + peek: the bytes a decision about the frame at `h` needs.
  size_t Need(const uint8_t* h) const;
  // A whole header (+ peek) at `p`: decides, updates state_/left_.
  // Returns the action taken (kPass for frames not asked about).
  Action Decide(const uint8_t* p, Sink& sink);

  State state_;
  uint64_t left_;       // bytes of the current payload still to pass/skip
  bool in_block_ = false;  // inside a header block
  uint8_t held_[kHeaderSize + 5];
  size_t held_len_ = 0;    // bytes of a split header (+ peek) held
};

}  // namespace sluice
