// Http1Session: HTTP/1.1 on one connection. Owns the llhttp parser (strict:
// no lenient flags), assembles request heads across reads, hands requests to
// the delegate, and serializes responses strictly in request order: output
// for a request whose predecessors have not finished is staged until they
// have.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/http1/line_fold_scanner.h"
#include "core/net/output_queue.h"
#include "core/body/pipe.h"
#include "core/common/result.h"
#include "core/net/server_delegate.h"
#include "core/net/session.h"

namespace sluice {

class Connection;
class Http1PipeBody;
class PipeBodyListener;

// Headers the user set, as flags computed by the JS layer while it built the
// header block (so the core need not re-scan it).
enum ResponseHeadFlags : uint32_t {
  kHeadUserContentLength = 1u << 0,
  kHeadUserTransferEncoding = 1u << 1,
  kHeadUserChunked = 1u << 2,         // Transfer-Encoding ends in "chunked"
  kHeadUserDate = 1u << 3,            // or res.sendDate = false
  kHeadUserConnection = 1u << 4,
  kHeadUserConnectionClose = 1u << 5,
  kHeadUserKeepAlive = 1u << 6,       // a Keep-Alive header
  kHeadWholeBody = 1u << 7,           // end(body): the body length is known
};

class Http1Session final : public Session {
 public:
  explicit Http1Session(Connection* conn);
  ~Http1Session() override;

  // Session
  ReadBuffers::Want ReadMemory() const override;
  void OnRead(const char* data, size_t len) override;
  void OnEof() override;
  void OnTimeout(int kind) override;
  bool IsIdle() const override;
  void OnServerClosing() override;
  void OnClose() override;
  void OnWritesDone() override;

  // --- Response API, used by the binding. `seq` names the request. ---
  // Starts the head: appends the status line to the request's output queue
  // and returns that queue, to which the caller appends its header lines
  // ("Name: value\r\n" each); FinishHead then closes the head. Returns
  // nullptr and sets *err on failure.
  OutputQueue* BeginHead(uint32_t seq, int status, std::string_view reason,
                         int* err);
  // Appends the headers the server adds (Date, Connection, Keep-Alive,
  // Content-Length or Transfer-Encoding) unless flags say the user set them,
  // and the blank line. body_len is the whole body's length when flags has
  // kHeadWholeBody.
  int FinishHead(uint32_t seq, uint32_t flags, uint64_t body_len);
  // Body bytes: returns the queue to append `len` bytes to (chunk framing
  // already written), or nullptr when the body must not be sent (HEAD,
  // 204, 304) or on error (*err). EndBody must follow a non-null return.
  OutputQueue* BeginBody(uint32_t seq, size_t len, int* err);
  void EndBody(uint32_t seq);
  // Ends the response; `trailers` are "Name: value\r\n" lines sent after the
  // last chunk when chunked. Returns 0 or an error.
  int End(uint32_t seq, std::string_view trailers);
  // Writes "HTTP/1.1 100 Continue" for `seq`.
  int WriteContinue(uint32_t seq);
  // Writes an interim response (status 101..199) for `seq` before its
  // head: the status line, `header_lines` ("Name: value\r\n" each, checked
  // by the caller) and the blank line. kResultHeadersSent once the head is
  // out (an interim response after it would corrupt the response).
  int WriteInformational(uint32_t seq, int status,
                         std::string_view header_lines);
  // Writes a canned error response (when nothing of a response is on the
  // wire yet) and closes the connection gracefully. Status 0 (input that
  // is not HTTP/1.x): closes without an answer.
  void SendErrorAndClose(int status);
  // Write backlog above the high-water mark (res.write() returns false).
  bool NeedsDrain() const;
  bool HeadersSent(uint32_t seq) const;
  // Number of responses not yet finished.
  size_t pending_responses() const { return requests_.size(); }
  // Parse what a pipeline pause left unparsed (called in a dispatch).
  void ResumeParsing() override;
  bool HasHeldInput() const override { return !unparsed_.empty(); }

  Connection* connection() const { return conn_; }

  // Body from a native pipe (respondWithFile), after BeginHead/FinishHead
  // (the head carries Content-Length, or the body is chunked). Takes
  // `source` in every case. Returns kResultOk (the pipe runs; `listener`
  // hears OnPipeBodyDone exactly once), kResultNoBody (no body is sent — HEAD, 204,
  // 304 — and the response is already ended; the listener is not called),
  // or an error. Bodies stream in request order: a pipelined response's
  // pipe only starts pulling when it reaches the front. See
  // http1_pipe_body.cc.
  int StartPipeBody(uint32_t seq, PipeSource* source,
                    PipeBodyListener* listener);
  // Before BeginHead of a response whose body will come from a pipe: keep
  // its output (the head) back until the pipe has data, so that head and
  // first data go out in one write. StartPipeBody (or End) releases it.
  void HoldOutput(uint32_t seq);

 private:
  struct Request {
    uint32_t seq = 0;
    int method = 0;
    bool http10 = false;       // HTTP/1.0 (or 0.9)
    bool req_keep_alive = true;
    bool body_done = false;    // the request was fully received
    bool head_sent = false;    // BeginHead called
    bool no_body = false;      // HEAD, 1xx, 204, 304: body bytes dropped
    bool chunked = false;
    bool ended = false;        // End called
    bool close_after = false;  // the connection closes after this response
    OutputQueue staged;        // output produced before this one's turn
    std::unique_ptr<Http1PipeBody> pipe_body;  // body from a native pipe
    // Output stays in `staged` even at the front (HoldOutput): a pipe
    // body's head waits for its first data so both leave in one write.
    bool hold_output = false;
  };
  friend class Http1PipeBody;
  // Pipe bodies (http1_pipe_body.cc): moves the front response's pipe data
  // to the writer until the backlog bound, the pipe runs dry, or it ends.
  void PumpPipeBody();
  void PumpFrontPipe();
  void FailPipeBody(uint32_t seq, int err);
  // Ends HoldOutput: staged output joins the writer if r is the front.
  void ReleaseOutput(Request& r);
  // A pipe event from libuv (fs or write callback), or from inside
  // StartPipeBody (then no dispatch is opened: we are in a JS call).
  void OnPipeEvent(uint32_t seq, int err);

  // llhttp callbacks: static trampolines into the members below.
  static int OnMessageBeginCb(llhttp_t* p);
  static int OnUrlCb(llhttp_t* p, const char* at, size_t len);
  static int OnHeaderFieldCb(llhttp_t* p, const char* at, size_t len);
  static int OnHeaderValueCb(llhttp_t* p, const char* at, size_t len);
  static int OnHeadersCompleteCb(llhttp_t* p);
  static int OnBodyCb(llhttp_t* p, const char* at, size_t len);
  static int OnMessageCompleteCb(llhttp_t* p);
  int OnMessageBegin();
  int OnUrl(const char* at, size_t len);
  int OnHeaderField(const char* at, size_t len);
  int OnHeaderValue(const char* at, size_t len);
  int OnHeadersComplete();
  int OnBody(const char* at, size_t len);
  int OnMessageComplete();

  void Execute(const char* data, size_t len);
  void DeliverHead(bool complete);
  // An accepted Upgrade / CONNECT: the connection becomes a TunnelSession;
  // [head, head + len) go to the delegate's OnUpgrade.
  void SwitchToTunnel(const char* head, size_t len);
  void HandleParseError(llhttp_errno_t err, const char* pos);
  // Limits (options.h): the request body passed max_request_body_size.
  // Answers 413 in the request's turn and closes (see RejectBody).
  void RejectBody();
  // on_version / on_version_complete: llhttp 8 accepts a bare LF after
  // the version; node's llhttp 9 answers 400 (see the .cc).
  static int OnVersionCb(llhttp_t* p, const char* at, size_t len);
  static int OnVersionCompleteCb(llhttp_t* p);
  static int OnChunkExtensionCb(llhttp_t* p, const char* at, size_t len);
  static int OnChunkExtensionValueCb(llhttp_t* p, const char* at,
                                     size_t len);
  int OnHeaderFieldComplete();
  int OnHeaderValueComplete();
  // A Connection header of the head holds the token "close" (OWS around
  // tokens allowed, as node's llhttp 9.4 reads it).
  bool HasCloseToken() const;
  // The scanner found a fold or a bare-LF blank line: marks the request
  // invalid (400, as node).
  int RefuseLines(LineFoldScanner::Result why);
  // pos: where in the input being parsed the error was found (rawPacket
  // and bytesParsed for the embedder); null for errors not found in input.
  void ReportClientError(int status, const char* code, const char* reason,
                         const char* pos = nullptr);
  // A method error at `pos` whose request line is not HTTP/1.x, on the
  // connection's first request of a port that also serves h2c.
  bool NotHttp1(const char* pos) const;
  Request* Find(uint32_t seq);
  OutputQueue& QueueFor(Request& r);
  bool IsFront(const Request& r) const {
    return !requests_.empty() && &requests_.front() == &r;
  }
  // Pops finished responses at the front and promotes the next one's
  // staged output to the writer.
  void Advance();
  int CheckHeaderBudget(size_t len);
  // Body coalescing: the body spans llhttp reports while parsing one input
  // (one socket read, or held-back input) are gathered into one run and
  // handed to the delegate once, by FlushBodyRun, before anything that must
  // follow them (the request's end, an error, the end of the input). A
  // chunked body of 1-byte chunks thus crosses into JS once per read, not
  // once per chunk. Returns false when the connection was destroyed.
  void AddBodySpan(const char* at, size_t len);
  bool FlushBodyRun();

  Connection* conn_;
  llhttp_t parser_;
  llhttp_settings_t settings_;
  std::deque<Request> requests_;
  uint32_t next_seq_ = 0;

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
  bool head_pending_ = false;   // headers complete, not yet delivered
  size_t header_bytes_ = 0;
  uint32_t current_seq_ = 0;    // seq of the message being parsed
  RequestHead head_;            // reused to avoid per-request allocation
  std::vector<std::pair<std::string_view, std::string_view>> trailers_;

  bool parse_dead_ = false;     // after a parse error: ignore input
  bool header_overflow_ = false;
  bool invalid_header_ = false;   // a callback refused the head
  // Why invalid_header_ (HPE_* code and reason for clientError).
  const char* invalid_code_ = nullptr;
  const char* invalid_reason_ = nullptr;
  bool body_too_large_ = false;   // RejectBody is due
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
  bool server_closing_ = false;
  bool pumping_ = false;        // PumpPipeBody on the stack
  bool pump_again_ = false;     // asked again while pumping
  int in_pipe_api_ = 0;         // inside StartPipeBody
  bool eof_ = false;
  std::string unparsed_;        // input held back by a pipeline pause

  // Zero-copy uploads: reads land in the embedder's memory (the
  // connection's ReadBuffers); body chunks parsed from there are reported
  // by offset into it.
  bool in_body_ = false;           // headers done, body bytes still to come
  bool read_in_ubuf_ = false;      // the input being parsed is in it

  // The body run not yet delivered (AddBodySpan). In the embedder's buffer
  // (run_in_ubuf_) it is [read buffer base + run_off_, + run_len_): later spans
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
