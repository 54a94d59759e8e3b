// Http1Session: HTTP/1.1 on one connection. Feeds the connection's reads
// to its Http1Parser, hands the requests it parses to the delegate with
// their deadlines and limits, and serializes responses strictly in request
// order: output for a request whose predecessors have not finished is
// staged until they have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/http1/http1_parser.h"
#include "core/observe/access_log.h"
#include "core/net/output_queue.h"
#include "core/body/pipe.h"
#include "core/files/static_files.h"
#include "core/common/result.h"
#include "core/net/session.h"

namespace sluice {

class Connection;
class FileSource;
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

class Http1Session final : public Session, private Http1ParserListener,
                           private StaticLookupClient {
 public:
  explicit Http1Session(Connection* conn);
  ~Http1Session() override;

  // Session
  ReadBuffers::Want ReadMemory() const override;
  void OnRead(const char* data, size_t len) override;
  void OnEof() override;
  void OnTimeout(int kind) override;
  bool IsIdle() const override;
  // Retired (a tunnel or a WebSocket took the connection): no request of
  // it can progress any more (the binding finds no HTTP/1.1 session), so
  // it may be freed once no pipe body or static lookup can call back.
  bool CanFreeRetired() const override;
  void OnServerClosing() override;
  void OnClose() override;
  void OnWritesDone() override;
  Http1Session* AsHttp1() override { return this; }

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
  // The client is not taking its responses: the write backlog is at the
  // high-water mark with a write in flight, or at kOutputBatchBound times
  // it. Parsing pauses then (OnMessageDone, kPauseOutput).
  bool OutputBacklogged() const;
  static constexpr size_t kOutputBatchBound = 16;
  bool HeadersSent(uint32_t seq) const;
  // Number of responses not yet finished.
  size_t pending_responses() const { return requests_.size(); }
  // Parse what a pipeline pause left unparsed (called in a dispatch).
  void ResumeParsing() override;
  bool HasHeldInput() const override { return !unparsed_.empty(); }
  // From now on every read is also handed to the delegate as a copy
  // (OnReadCopy); off again with false. Nothing is copied while off.
  void CopyReads(bool on) { copy_reads_ = on; }

  Connection* connection() const { return conn_; }

  // Body from a native pipe (respondWithFile), after BeginHead/FinishHead
  // (the head carries Content-Length, or the body is chunked). Takes
  // `source` in every case. Returns kResultOk (the pipe runs; `listener`
  // hears OnPipeBodyDone exactly once), kResultNoBody (no body is sent — HEAD, 204,
  // 304 — and the response is already ended; the listener is not called),
  // or an error. Bodies stream in request order: a pipelined response's
  // pipe only starts pulling when it reaches the front. See
  // http1_pipe_body.cc. `file`: the same object as `source` when the body
  // is a file read as is (no transform): on a cleartext connection its
  // bytes may then go out with sendfile(2) instead of through the pipe.
  int StartPipeBody(uint32_t seq, PipeSource* source,
                    PipeBodyListener* listener, FileSource* file = nullptr);
  // Before BeginHead of a response whose body will come from a pipe: keep
  // its output (the head) back until the pipe has data, so that head and
  // first data go out in one write. StartPipeBody (or End) releases it.
  void HoldOutput(uint32_t seq);

 private:
  struct Request {
    uint32_t seq = 0;
    int method = 0;
    int status = 0;           // BeginHead's (ServerMetrics)
    uint64_t start_ns = 0;    // uv_hrtime() at the parsed head (ServerMetrics)
    // Its access log line's request part (only while the listener has a log).
    std::unique_ptr<AccessLogEntry> log;
    bool http10 = false;       // HTTP/1.0 (or 0.9)
    bool req_keep_alive = true;
    bool body_done = false;    // the request was fully received
    bool head_sent = false;    // BeginHead called
    bool no_body = false;      // HEAD, 1xx, 204, 304: body bytes dropped
    bool status_no_body = false;  // 204 or 304 (a chunked one closes)
    bool chunked = false;
    bool ended = false;        // End called
    bool close_after = false;  // the connection closes after this response
    // maxRequestsPerSocket reached (node's maxRequestsOnConnectionReached):
    // the head says Connection: close, yet the connection stays open, as
    // node's; `over_limit`: beyond it (answered 503 by the embedder).
    bool limit_reached = false;
    bool over_limit = false;
    OutputQueue staged;        // output produced before this one's turn
    std::unique_ptr<Http1PipeBody> pipe_body;  // body from a native pipe
    // Output stays in `staged` even at the front (HoldOutput): a pipe
    // body's head waits for its first data so both leave in one write.
    bool hold_output = false;
    // serveStatic: the lookup of this request while its file is opened
    // on the threadpool, and a copy of its head in case it falls through
    // to the embedder after all (parsing waits meanwhile: static_pending_).
    StaticLookupPtr static_lookup;
    struct SavedHead {
      RequestHead head;
      std::string url;
      std::vector<std::pair<std::string, std::string>> fields;
    };
    std::unique_ptr<SavedHead> saved_head;
  };
  friend class Http1PipeBody;
  // Pipe bodies (http1_pipe_body.cc): moves the front response's pipe data
  // to the writer until the backlog bound, the pipe runs dry, or it ends.
  void PumpPipeBody();
  void PumpFrontPipe();
  // The front response's file in sendfile mode: what is in memory goes
  // through the writer, then (the writer empty) sendfile(2) from the
  // loop while the next pages are resident. See http1_pipe_body.cc.
  // kSendfileFailed: the socket failed (the client left); kSendfileChanged:
  // the file no longer holds the promised bytes (FileSource::CheckUnchanged).
  enum SendfileStep {
    kSendfileWait, kSendfileDone, kSendfileRead, kSendfileFailed,
    kSendfileChanged,
  };
  SendfileStep SendfileFront(Request& r, int* err);
  // The front request's pipe body is wholly queued: its source closes,
  // the response ends (which may pump the next one, nested: `r` may be
  // gone afterwards), then its listener hears OnPipeBodyDone(0).
  void EndPipeBody(Request& r);
  // Ends a pipe body that failed mid-way: the connection is destroyed, with
  // a reset when `reset` (bytes already in the kernel may be wrong).
  void FailPipeBody(uint32_t seq, int err, bool reset = false);
  // Ends HoldOutput: staged output joins the writer if r is the front.
  void ReleaseOutput(Request& r);
  // A pipe event from libuv (fs or write callback), or from inside
  // StartPipeBody (then no dispatch is opened: we are in a JS call).
  void OnPipeEvent(uint32_t seq, int err);

  // Http1ParserListener: the parser's events for the request being
  // parsed (see http1_parser.h for their order); each runs inside
  // Execute, so inside a dispatch.
  int OnMessageBegin() override;
  int OnHeadersComplete() override;
  void OnHead(RequestHead& head) override;
  void OnBody(const char* data, size_t len, int64_t offset) override;
  void OnMessageEnd() override;
  void OnTrailers(const Http1Fields& trailers) override;
  int OnMessageDone() override;
  bool Stopped() const override;

  // serveStatic (core/files/static_files.h): true when a mount took the
  // request (answered, or a lookup is pending); false: deliver it.
  bool TryStatic(StaticFiles* files, RequestHead& head);
  // StaticLookupClient (tag: the request's seq): the answer is sent here;
  // a fall-through delivers the saved head. Both end the wait.
  void OnStaticAnswer(uint64_t tag, StaticAnswer& answer) override;
  void OnStaticFallThrough(uint64_t tag) override;
  // A pending lookup finished: parsing goes on.
  void StaticDone();

  // OnRead without the copy for the delegate.
  void Consume(const char* data, size_t len);
  // Parses [data, data + len) and acts on how the parser stopped.
  void Execute(const char* data, size_t len);
  // An accepted Upgrade / CONNECT: the connection becomes a TunnelSession;
  // [head, head + len) go to the delegate's OnUpgrade.
  void SwitchToTunnel(const char* head, size_t len);
  // The parser refused the input (parser_.error()).
  void HandleParseError();
  // Limits (options.h): the request body passed max_request_body_size.
  // Answers 413 in the request's turn and closes (see RejectBody).
  void RejectBody();
  // pos: where in the parser's input the error was found (rawPacket and
  // bytesParsed for the embedder); null for errors not found in input.
  void ReportClientError(int status, const char* code, const char* reason,
                         const char* pos = nullptr);
  Request* Find(uint32_t seq);
  OutputQueue& QueueFor(Request& r);
  bool IsFront(const Request& r) const {
    return !requests_.empty() && &requests_.front() == &r;
  }
  // Pops finished responses at the front and promotes the next one's
  // staged output to the writer.
  void Advance();

  // The embedder's HTTP/1 events (asked each time: teardown swaps the
  // listener's delegate).
  Http1Delegate* delegate() const;

  Connection* conn_;
  Http1Parser parser_;
  std::deque<Request> requests_;
  uint32_t next_seq_ = 0;
  uint32_t current_seq_ = 0;    // seq of the message being parsed
  // HTTP/1.1 requests seen, the count maxRequestsPerSocket limits (node
  // counts HTTP/1.1 requests only).
  uint64_t http11_requests_ = 0;
  bool parse_dead_ = false;     // after a parse error: ignore input
  // The input being parsed lies in the connection's read buffer.
  bool read_in_ubuf_ = false;
  bool server_closing_ = false;
  // next_seq_ when the server began closing: requests begun before it
  // (seq precedes it, wrap-safe) are in flight and answered as usual.
  uint32_t close_seq_ = 0;
  bool pumping_ = false;        // PumpPipeBody on the stack
  bool pump_again_ = false;     // asked again while pumping
  int in_pipe_api_ = 0;         // inside StartPipeBody
  bool eof_ = false;
  std::string log_peer_;        // the access log's remote address, once formatted
  bool copy_reads_ = false;     // CopyReads
  std::string unparsed_;        // input held back by a pipeline pause
  // OnMessageDone paused the parser for the write backlog (kPauseOutput),
  // not for the number of pending responses (kPausePipeline).
  bool output_pause_ = false;
  // serveStatic lookups waiting for the threadpool: parsing is paused
  // (later requests must not overtake one that may still fall through).
  int static_pending_ = 0;
};

}  // namespace sluice
