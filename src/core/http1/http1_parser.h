// Http1Parser: turns HTTP/1.x request bytes into request events. Owns the
// llhttp parser (strict: no lenient flags), the header arena that keeps
// fields split across reads, the checks that make llhttp 8.1 answer as
// node's llhttp 9 does, and the body coalescing that hands one read's body
// bytes over as one run. It knows no connection, socket or delegate: it
// reports to an Http1ParserListener (the Http1Session, or a fuzz harness),
// so it can be driven alone.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/options.h"
#include "core/http1/line_fold_scanner.h"
#include "core/http1/http1_delegate.h"

namespace sluice {

// What the parser reports, in this order per request: OnMessageBegin,
// OnHeadersComplete, OnHead (once), OnBody (byte order, zero or more
// times), OnMessageEnd, OnTrailers (only when the head was delivered
// before the message ended), OnMessageDone. Every call is made from inside
// Http1Parser::Execute or Finish; the listener may stop the connection in
// any of them (Stopped() then returns true and the parser reports nothing
// more of this input).
class Http1ParserListener {
 public:
  virtual ~Http1ParserListener() = default;
  // A request's first byte. 0 to go on.
  virtual int OnMessageBegin() = 0;
  // The head is parsed (method, version, keep-alive readable from the
  // parser); nothing of it has been delivered yet. 0 to go on.
  virtual int OnHeadersComplete() = 0;
  // Deliver the head: as soon as its body starts or the input ends
  // (head.complete false), or with the message's end (true). `head`'s
  // views point into the parser's arena and are valid during the call;
  // head.seq is left to the listener.
  virtual void OnHead(RequestHead& head) = 0;
  // One run of body bytes. offset >= 0: the bytes lie in the embedder's
  // read buffer given to Execute, at that offset; -1: transient memory.
  virtual void OnBody(const char* data, size_t len, int64_t offset) = 0;
  // The request's last byte was parsed (before its head or trailers are
  // delivered).
  virtual void OnMessageEnd() = 0;
  // The body of a head delivered earlier ended, with these trailers
  // (views valid during the call).
  virtual void OnTrailers(const Http1Fields& trailers) = 0;
  // After the request's deliveries: 0 to go on, HPE_PAUSED to pause
  // (Execute then returns kPaused), -1 to stop.
  virtual int OnMessageDone() = 0;
  // The connection went away during a call: nothing more is delivered.
  virtual bool Stopped() const = 0;
};

class Http1Parser {
 public:
  // `options` are read when used (some limits may change at run time),
  // except insecure_http_parser, read here. detect_http2: the port also
  // serves h2c, so a first request line naming another protocol gets no
  // HTTP/1.1 answer (see Error::status 0).
  Http1Parser(Http1ParserListener* listener, const ServerOptions* options,
              bool detect_http2);
  Http1Parser(const Http1Parser&) = delete;
  Http1Parser& operator=(const Http1Parser&) = delete;

  enum class Status {
    kOk,        // all of the input was parsed
    kPaused,    // OnMessageDone asked for a pause at pos()
    kUpgrade,   // an Upgrade / CONNECT head ended at pos()
    kError,     // error(): the input is refused
    kStopped,   // the listener stopped (Stopped())
  };
  // Parses [data, data + len). ubuf_base: the input lies in the embedder's
  // read buffer that starts there (body runs are then reported by offset
  // and compacted in place over parsed chunk framing), else nullptr.
  Status Execute(const char* data, size_t len, char* ubuf_base);
  // Where kPaused / kUpgrade stopped.
  const char* pos() const { return pos_; }
  // After kPaused: parse on.
  void Resume() { llhttp_resume(&parser_); }
  // After kUpgrade of a request that switches nothing: parse on.
  void ResumeAfterUpgrade() { llhttp_resume_after_upgrade(&parser_); }
  // The peer's EOF: completes a message delimited by EOF. False when a
  // message was cut short.
  bool Finish();
  // Parsing of the current message is abandoned (its body is refused).
  void Abandon();

  // The refusal Execute's kError stands for.
  struct Error {
    enum Kind {
      kClientError,   // answer `status` (0: close without an answer)
      kBodyTooLarge,  // maxRequestBodySize: 413 in the request's turn
      kStopped,       // a callback stopped the parser (connection ending)
    } kind;
    int status;
    const char* code;
    const char* reason;
    // Where in the input (input_begin() .. input_end()) it was found;
    // null when not found in input.
    const char* at = nullptr;
  };
  const Error& error() const { return error_; }
  // The input of the last Execute (valid while its caller's buffer is).
  const char* input_begin() const { return exec_start_; }
  const char* input_end() const { return exec_end_; }

  // The current message (valid from OnHeadersComplete).
  int method() const { return parser_.method; }
  bool http10() const {
    return parser_.http_major < 1 ||
           (parser_.http_major == 1 && parser_.http_minor == 0);
  }
  bool http11() const {
    return parser_.http_major == 1 && parser_.http_minor == 1;
  }
  bool keep_alive() const { return llhttp_should_keep_alive(&parser_) != 0; }
  // A message has begun and not ended.
  bool in_message() const { return message_in_progress_; }
  // Headers done, body bytes still to come.
  bool in_body() const { return in_body_; }
  // The current message's Content-Length, or the chunked body so far,
  // passed max_request_body_size.
  bool body_too_large() const { return body_too_large_; }
  // Messages begun so far.
  uint64_t messages() const { return messages_; }
  // Drops a body run not yet delivered (the connection closed).
  void DropBody() {
    in_body_ = false;
    run_len_ = 0;
  }

 private:
  // llhttp callbacks: static trampolines into the members below.
  static int OnMessageBeginCb(llhttp_t* p);
  static int OnUrlCb(llhttp_t* p, const char* at, size_t len);
  static int OnHeaderFieldCb(llhttp_t* p, const char* at, size_t len);
  static int OnHeaderValueCb(llhttp_t* p, const char* at, size_t len);
  static int OnHeaderFieldCompleteCb(llhttp_t* p);
  static int OnHeaderValueCompleteCb(llhttp_t* p);
  static int OnHeadersCompleteCb(llhttp_t* p);
  static int OnBodyCb(llhttp_t* p, const char* at, size_t len);
  static int OnMessageCompleteCb(llhttp_t* p);
  // on_version / on_version_complete: llhttp 8 accepts a bare LF after
  // the version; node's llhttp 9 answers 400 (see the .cc).
  static int OnVersionCb(llhttp_t* p, const char* at, size_t len);
  static int OnVersionCompleteCb(llhttp_t* p);
  static int OnChunkHeaderCb(llhttp_t* p);
  static int OnChunkExtensionCb(llhttp_t* p, const char* at, size_t len);
  static int OnChunkExtensionValueCb(llhttp_t* p, const char* at,
                                     size_t len);
  int OnMessageBegin();
  int OnUrl(const char* at, size_t len);
  int OnHeaderField(const char* at, size_t len);
  int OnHeaderValue(const char* at, size_t len);
  int OnHeaderFieldComplete();
  int OnHeaderValueComplete();
  int OnHeadersComplete();
  int OnBody(const char* at, size_t len);
  int OnMessageComplete();
  int OnVersion(const char* at, size_t len);
  int OnVersionComplete();
  int OnChunkExtension(size_t len);
  int OnChunkExtensionValue(const char* at, size_t len);

  Status Fail(llhttp_errno_t err, const char* pos);
  void DeliverHead(bool complete);
  int CheckHeaderBudget(size_t len);
  // A Connection header of the head holds the token "close" (OWS around
  // tokens allowed, as node's llhttp 9.4 reads it).
  bool HasCloseToken() const;
  // Marks the head invalid (400) with node's code and reason.
  int Refuse(const char* code, const char* reason);
  // The scanner found a fold or a bare-LF blank line: the request is
  // invalid (400, as node).
  int RefuseLines(LineFoldScanner::Result why);
  // A method error at `pos` on a first request line whose version token is
  // not HTTP/1.x, on a port that also serves h2c.
  bool NamesOtherProtocol(const char* pos) const;
  // Body coalescing: the body spans llhttp reports while parsing one input
  // are gathered into one run and handed to the listener once, by
  // FlushBodyRun, before anything that must follow them (the request's
  // end, an error, the end of the input). A chunked body of 1-byte chunks
  // thus crosses into JS once per read, not once per chunk. FlushBodyRun
  // returns false when the listener stopped.
  void AddBodySpan(const char* at, size_t len);
  bool FlushBodyRun();

  Http1ParserListener* listener_;
  const ServerOptions* options_;
  const bool detect_http2_;
  const bool lenient_;  // insecureHTTPParser
  llhttp_t parser_;
  llhttp_settings_t settings_;
  uint64_t messages_ = 0;
  const char* pos_ = nullptr;
  Error error_{Error::kClientError, 0, nullptr, nullptr};

  // The head being parsed: names and values as offsets into arena_, which
  // keeps fields split across reads.
  std::string arena_;
  struct Span { uint32_t off, len; };
  std::vector<std::pair<Span, Span>> fields_;
  Span url_{0, 0};
  bool in_field_ = false;       // inside a header name
  size_t trailer_start_ = 0;    // fields_ index where trailers begin
  bool in_trailers_ = false;
  bool message_in_progress_ = false;
  bool done_refused_ = false;   // OnMessageDone returned -1 in this Execute
  bool head_pending_ = false;   // headers complete, not yet delivered
  size_t header_bytes_ = 0;
  RequestHead head_;            // reused to avoid per-request allocation
  Http1Fields trailers_;

  bool header_overflow_ = false;
  bool invalid_header_ = false;   // a callback refused the head
  // Why invalid_header_ (HPE_* code and reason for clientError).
  const char* invalid_code_ = nullptr;
  const char* invalid_reason_ = nullptr;
  bool body_too_large_ = false;
  bool ext_overflow_ = false;     // chunk extensions over the limit
  uint64_t body_bytes_ = 0;       // body bytes of the current request
  size_t chunk_ext_bytes_ = 0;    // extension bytes of the current chunk
  // End of the last on_version span and the Execute call it came from
  // (exec_gen_): a span from an earlier read ended at that read's end.
  const char* version_end_ = nullptr;
  uint64_t version_gen_ = 0;
  uint64_t exec_gen_ = 0;
  // The version ended exactly at the end of a read: the next read's first
  // byte must be CR.
  bool cr_due_ = false;
  // The input llhttp_execute is working on.
  const char* exec_start_ = nullptr;
  const char* exec_end_ = nullptr;
  // Line folds in the head and trailers (llhttp 8.1 accepts them).
  LineFoldScanner fold_;

  bool in_body_ = false;           // headers done, body bytes still to come
  // The embedder's read buffer the input lies in (Execute's ubuf_base).
  char* ubuf_base_ = nullptr;

  // The body run not yet delivered (AddBodySpan). In the embedder's buffer
  // (run_in_ubuf_) it is [ubuf_base_ + run_off_, + run_len_): later spans
  // of the same read are moved down next to it, over chunk framing already
  // parsed, so the run stays one view of that memory. Elsewhere it is
  // [run_ptr_, + run_len_) inside the input while spans are contiguous
  // (a Content-Length body), else a copy in run_copy_. Never more than one
  // input's bytes: the bound on what a request buffers natively.
  size_t run_len_ = 0;
  size_t run_off_ = 0;
  const char* run_ptr_ = nullptr;
  bool run_in_ubuf_ = false;
  bool run_copied_ = false;
  std::string run_copy_;
};

}  // namespace sluice
