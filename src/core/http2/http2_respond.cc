// Http2Session's stream API: what the embedder calls to answer a stream
// (respond, 1xx, body writes, end and trailers, resets, request-body flow
// control, native body sources). Loop thread; any context (inside or
// outside a dispatch); each call only submits to nghttp2 and marks the
// connection dirty — frames leave in the next OnFlush.
#include <string>

#include "core/http2/http2_pipe_body.h"
#include "core/http2/http2_session.h"
#include "core/http2/http2_stream.h"
#include "core/http2/http2_websocket.h"
#include "core/net/connection.h"
#include "core/net/listener.h"

namespace sluice {

int Http2Session::SubmitWithBody(Stream* st, HeaderList& headers) {
  nghttp2_data_provider prd;
  prd.source.ptr = st;
  prd.read_callback = ReadCb;
  return nghttp2_submit_response(session_, st->id, headers.nv(),
                                 headers.size(), &prd);
}

int Http2Session::Respond(uint64_t wire_id, int status, HeaderList& headers,
                          uint32_t flags) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (st->responded) return kResultHeadersSent;
  return SubmitResponse(st, status, headers, flags);
}

int Http2Session::SubmitResponse(Stream* st, int status,
                                 HeaderList& headers, uint32_t flags) {
  int32_t id = st->id;
  st->responded = true;
  st->status = status;
  st->no_body = st->head_request || status == 204 || status == 304 ||
                (flags & kH2EndStream);
  if (st->no_body) st->compressor.reset();
  st->wait_for_trailers = (flags & kH2WaitForTrailers) != 0;
  int r;
  if (st->no_body && !st->wait_for_trailers) {
    st->ended = true;
    r = nghttp2_submit_response(session_, id, headers.nv(), headers.size(),
                                nullptr);
  } else {
    st->queue = std::make_unique<WriteQueue>();
    st->source = st->queue.get();
    if (st->no_body) {
      st->ended = true;
      st->queue->set_ended();
    }
    r = SubmitWithBody(st, headers);
  }
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int Http2Session::SendInformational(uint64_t wire_id, HeaderList& headers) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (st->responded) return kResultHeadersSent;
  int r = nghttp2_submit_headers(session_, NGHTTP2_FLAG_NONE, id, nullptr,
                                 headers.nv(), headers.size(), nullptr);
  conn_->MarkDirty();
  return r < 0 ? kResultInvalid : kResultOk;
}

int Http2Session::StreamFor(int32_t id, bool responded, Stream** st) {
  *st = dead() ? nullptr : Find(id);
  if (dead()) return kResultClosed;
  if (!*st) return kResultNoRequest;
  if ((*st)->responded != responded) {
    return responded ? kResultHeadersNotSent : kResultHeadersSent;
  }
  return kResultOk;
}

int Http2Session::Write(uint64_t wire_id, const char* data, size_t len,
                        ExternalRef* ref) {
  const int32_t id = Http2StreamId(wire_id);
  Stream* st;
  int err = StreamFor(id, true, &st);
  if (err == kResultOk && st->ended) {
    err = st->no_body ? kResultOk : kResultEnded;
  } else if (err == kResultOk &&
             (st->queue == nullptr || st->source != st->queue.get())) {
    err = kResultInvalid;  // a native source owns the body
  }
  if (err != kResultOk || st->ended) {
    if (ref) ref->Release();
    return err;
  }
  size_t max_out = conn_->listener()->options().max_output_buffer;
  if (max_out > 0 && len > 0 && st->queue->size() > max_out) {
    // maxOutputBuffer, per stream: the peer does not take the body and the
    // handler ignores 'drain'. Reset the stream (as HTTP/1.1 destroys its
    // connection): nothing more of this response can get through.
    if (ref) ref->Release();
    ResetStream(id, NGHTTP2_INTERNAL_ERROR, false);
    return kResultClosed;
  }
  if (st->compressor) {
    // Small writes with nothing queued are compressed now; the others on
    // the threadpool, in order (OnStreamCompressed queues their output).
    // The stream takes `ref` (released once the bytes are compressed) or
    // copies the bytes when it queues them.
    std::string out;
    int cr = st->compressor->Write(data, len, Compressor::kNoFlush, ref, &out);
    if (cr < 0) {
      ResetStream(id, NGHTTP2_INTERNAL_ERROR, false);
      return kResultInvalid;
    }
    if (cr != CompressStream::kInline) return kResultOk;  // the sink resumes
    st->queue->PushOwned(std::move(out));
  } else {
    st->queue->Push(data, len, ref);
  }
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

int Http2Session::End(uint64_t wire_id, HeaderList* trailers) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (!st->responded) return kResultHeadersNotSent;
  if (st->ended) return kResultOk;
  bool body_done = true;
  if (st->compressor && st->queue && st->source == st->queue.get()) {
    std::string out;
    int cr = st->compressor->Finish(nullptr, 0, nullptr, &out);
    if (cr < 0) {
      st->compressor.reset();
      ResetStream(id, NGHTTP2_INTERNAL_ERROR, false);
      return kResultInvalid;
    }
    if (cr == CompressStream::kInline) {
      st->compressor.reset();  // its state (up to ~1 MiB for brotli) goes now
      st->queue->PushOwned(std::move(out));
    } else {
      // Behind queued work: OnStreamCompressed ends the body once the
      // compressor has finished. Writes are refused from now on.
      st->end_after_compress = true;
      body_done = false;
    }
  }
  st->ended = true;
  if (trailers && !trailers->empty()) {
    st->trailers = std::make_unique<HeaderList>(std::move(*trailers));
  }
  if (!body_done) return kResultOk;
  if (st->queue && st->source == st->queue.get()) st->queue->set_ended();
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

bool Http2Session::Backlogged(Stream* st) const {
  return (st->queue && st->queue->size() >= high_water_mark_) ||
         (st->websocket && st->websocket->Backlog() >= high_water_mark_) ||
         (st->compressor &&
          st->compressor->pending_bytes() > CompressStream::kHighWater);
}

namespace {
// nghttp2's data source callback (from nghttp2_session_send) for the empty
// DATA frame that ends a stream whose trailer block is empty: no bytes,
// EOF. Reads nothing through `source`.
ssize_t EmptyEndReadCb(nghttp2_session*, int32_t, uint8_t*, size_t,
                       uint32_t* data_flags, nghttp2_data_source*, void*) {
  *data_flags |= NGHTTP2_DATA_FLAG_EOF;
  return 0;
}
}  // namespace

int Http2Session::SendTrailers(uint64_t wire_id, HeaderList& trailers) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (trailers.size() == 0) {
    // As node: no trailer block at all (an empty HEADERS frame confuses
    // some clients) but an empty DATA frame with END_STREAM.
    nghttp2_data_provider end;
    end.source.ptr = nullptr;
    end.read_callback = EmptyEndReadCb;
    int r = nghttp2_submit_data(session_, NGHTTP2_FLAG_END_STREAM, id, &end);
    conn_->MarkDirty();
    return r == 0 ? kResultOk : kResultInvalid;
  }
  int r = nghttp2_submit_trailer(session_, id, trailers.nv(), trailers.size());
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int Http2Session::ResetStream(uint64_t wire_id, uint32_t code, bool after_end) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  st->embedder_reset = true;
  if (after_end && st->responded && st->ended && !st->end_stream_sent) {
    // A reset queued now would make nghttp2 drop the response's unsent
    // frames (it marks the stream closing at submit time): OnFrameSendCb
    // submits it once END_STREAM is out.
    st->reset_after_response = true;
    st->reset_code = code;
    return kResultOk;
  }
  if (st->responded && !st->end_stream_sent) {
    // nghttp2 marks a stream closing when its RST_STREAM is submitted and
    // then drops its unsent HEADERS and DATA: respond() + write() +
    // destroy() in one turn would send nothing. As node, what is queued
    // is framed first: OnFlush submits the reset after its send.
    if (!st->reset_deferred) {
      st->reset_deferred = true;
      deferred_resets_.push_back(id);
    }
    st->reset_code = code;
    conn_->MarkDirty();
    return kResultOk;
  }
  int r = nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, code);
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

void Http2Session::Pause(uint64_t wire_id, bool paused) {
  const int32_t id = Http2StreamId(wire_id);
  if (paused) {
    if (Stream* st = Find(id)) st->read_paused = true;
    return;
  }
  if (dead()) return;
  Stream* st = Find(id);
  if (!st) return;
  st->read_paused = false;
  if (st->unacked > 0) {
    nghttp2_session_consume_stream(session_, id, st->unacked);
    st->unacked = 0;
    conn_->MarkDirty();
  }
}

void Http2Session::Consume(uint64_t wire_id, size_t n) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead() || n == 0) return;
  nghttp2_session_consume_connection(session_, n);
  Stream* st = Find(id);
  if (st && st->read_paused) {
    st->unacked += n;
  } else if (st) {
    nghttp2_session_consume_stream(session_, id, n);
  }
  conn_->MarkDirty();  // a WINDOW_UPDATE may be due
}

bool Http2Session::NeedsDrain(uint64_t wire_id) {
  const int32_t id = Http2StreamId(wire_id);
  Stream* st = Find(id);
  if (!st || !Backlogged(st)) return false;
  st->drain_wanted = true;
  return true;
}

std::string_view Http2Session::DateValue() { return conn_->listener()->date().Value(); }

bool Http2Session::IsHeadRequest(uint64_t wire_id) {
  const int32_t id = Http2StreamId(wire_id);
  Stream* st = Find(id);
  return st && st->head_request;
}

int Http2Session::AttachBodySource(int32_t id, Http2BodySource* source) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (!st->responded || st->ended || !st->queue || st->queue->size() > 0) {
    return kResultInvalid;
  }
  st->queue.reset();
  st->compressor.reset();  // a native source brings its own (CompressTransform)
  st->source = source;
  st->ended = true;  // the source decides the end from now on
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

void Http2Session::ResumeData(int32_t id) {
  if (dead()) return;
  Stream* st = Find(id);
  if (!st || !st->deferred) return;
  st->deferred = false;
  nghttp2_session_resume_data(session_, id);
  conn_->MarkDirty();
}

int Http2Session::StartPipeBody(uint64_t wire_id, PipeSource* source,
                                PipeBodyListener* listener) {
  const int32_t id = Http2StreamId(wire_id);
  Stream* st;
  int err = StreamFor(id, true, &st);
  if (err == kResultOk && st->no_body) {
    err = kResultNoBody;
  } else if (err == kResultOk &&
             (st->ended || !st->queue || st->queue->size() > 0)) {
    err = kResultInvalid;
  }
  if (err != kResultOk) {
    source->Close();
    return err;
  }
  Http2PipeBody* body = new Http2PipeBody(this, id, source, listener);
  AttachBodySource(id, body);
  // Start may fail synchronously (OnPipeError resets the stream).
  body->Start();
  return kResultOk;
}

void Http2Session::DeferBodyDone(PipeBodyListener* listener, int status) {
  events_.push_back({Event::kBodyDone, 0, 0, listener, status});
  // Delivered after the nghttp2 call in progress (SendPending).
  if (!sending_) conn_->MarkDirty();
}

}  // namespace sluice
