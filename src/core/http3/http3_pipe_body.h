// Http3PipeBody: the HTTP/3 Sink of a native pipe (respondWithFile,
// respondWithFD, serveStatic on an HTTP/3 request stream). The file's
// bytes are read off the loop by the pipe's source (FileSource, as on
// HTTP/1.1 and HTTP/2) and written by Http3Session as DATA frames on the
// QUIC stream.
//
// Every pull happens inside a QuicEndpoint::Process pass
// (Http3Session::OnPass, OnStreamWritable), never from the pipe's own
// callbacks: those only mark the body woken and ask the endpoint for a pass
// (QuicEndpoint::RequestFlush). So each write is made where the endpoint
// ticks it out in the same Process, and no write can sit in OpenSSL's
// buffers waiting for a timer.
//
// Backpressure: the session writes while the QUIC stream's send buffer
// takes the whole frame; a short write (SSL_write_ex2 taking fewer bytes)
// leaves the rest of that one frame in the request's output and stops
// pulling until OnStreamWritable. Pulls that stop leave the pipe to fill
// its read-ahead and idle.
//
// Ownership: made by Http3Session::StartPipeBody and owned by the request;
// freed with Destroy (the body ended, failed, or the stream or connection
// went away), which destroys the pipe: the source closes its file once
// its in-flight reads are done.
#pragma once

#include <cstdint>

#include "core/body/pipe.h"
#include "core/http1/http1_pipe_body.h"  // PipeBodyListener

namespace sluice {

class Http3Session;

class Http3PipeBody final : public PipeSink {
 public:
  // Takes `source`. `listener` (may be null) is the session's to call
  // once (TakeListener).
  Http3PipeBody(Http3Session* session, uint64_t id, PipeSource* source,
                PipeBodyListener* listener);
  Http3PipeBody(const Http3PipeBody&) = delete;
  Http3PipeBody& operator=(const Http3PipeBody&) = delete;

  void Start() { pipe_->Start(); }
  Pipe* pipe() const { return pipe_; }
  PipeBodyListener* TakeListener() {
    PipeBodyListener* l = listener_;
    listener_ = nullptr;
    return l;
  }
  // Destroys the pipe and frees this (the listener is not called: take it
  // first).
  void Destroy();

  // Set while the body waits in the session's list of woken bodies.
  bool woken = false;

  // PipeSink (the Pipe, on the loop thread, possibly outside any pass):
  // data, the end or an error arrived. Both only wake the body; the
  // session's next pass pulls (Pull then returns the error, if any).
  void OnPipeReadable() override;
  void OnPipeError(int err) override;

 private:
  ~Http3PipeBody() override = default;

  Http3Session* session_;
  uint64_t id_;
  Pipe* pipe_;
  PipeBodyListener* listener_;
};

}  // namespace sluice
