#include "core/http2/http2_compression.h"

#include <string>

#include "core/compress/compress_stream.h"
#include "core/compress/compressor.h"
#include "core/http2/http2_session.h"
#include "core/http2/http2_stream.h"
#include "core/net/connection.h"
#include "core/net/listener.h"

namespace sluice {

void Http2PendingCompress::OnCompressDone(CompressJob* job, int st) {
  job_ = nullptr;
  session_->OnCompressDone(id_, job, st);  // may free this
}

int Http2Session::StartCompression(uint64_t wire_id, const CompressParams& params) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (st->ended || st->pending || st->compressor ||
      (st->queue && (st->source != st->queue.get() || st->queue->size() > 0))) {
    return kResultInvalid;
  }
  if (st->responded && st->no_body) return kResultOk;  // nothing to compress
  CompressStream* c =
      CompressStream::Create(conn_->listener()->loop(), params, st);
  if (c == nullptr) return kResultInvalid;
  st->compressor.reset(c);
  return kResultOk;
}

int Http2Session::FlushCompression(uint64_t wire_id) {
  const int32_t id = Http2StreamId(wire_id);
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (!st->compressor || !st->queue || st->ended) return kResultOk;
  // Ordered after the writes before it: inline when nothing is queued,
  // else its output comes through OnStreamCompressed.
  std::string out;
  int cr = st->compressor->Write(nullptr, 0, Compressor::kSyncFlush, nullptr,
                                 &out);
  if (cr < 0) {
    ResetStream(id, NGHTTP2_INTERNAL_ERROR, false);
    return kResultInvalid;
  }
  if (out.empty()) return kResultOk;
  st->queue->PushOwned(std::move(out));
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

void Http2Session::OnStreamCompressed(Stream* st,
                                      CompressStream::Result& r) {
  if (dead()) {
    st->compressor.reset();  // the connection is closing: nothing to send
    return;
  }
  int32_t id = st->id;
  Listener* l = conn_->listener();
  // From uv's after-work callback: the embedder's scopes (a drain or a
  // stream close reaches JS) and one flush at the end.
  l->BeginDispatch();
  if (r.error != 0) {
    st->compressor.reset();  // deleted after this callback returns
    ResetStream(id, NGHTTP2_INTERNAL_ERROR, false);
  } else if (st->queue && st->source == st->queue.get()) {
    st->queue->PushOwned(std::move(r.out));
    if (r.finished) {
      st->compressor.reset();
      if (st->end_after_compress) {
        st->end_after_compress = false;
        st->queue->set_ended();
      }
    }
    if (st->drain_wanted && !Backlogged(st)) {
      st->drain_wanted = false;
      events_.push_back({Event::kDrain, id, 0, nullptr, 0});
    }
    if (st->deferred) {
      st->deferred = false;
      nghttp2_session_resume_data(session_, id);
    }
  }
  conn_->MarkDirty();  // OnFlush sends the frames and delivers the drain
  l->EndDispatch();
}

namespace {
// Holds a finished CompressJob while its output sits in a stream's queue
// (referenced, not copied); the last segment written frees it.
class JobOutputRef final : public ExternalRef {
 public:
  explicit JobOutputRef(CompressJob* job) : job_(job) {}
  void Release() override {
    job_->Destroy();
    delete this;
  }

 private:
  CompressJob* job_;
};
}  // namespace

int Http2Session::RespondCompressed(uint64_t wire_id, int status,
                                    HeaderList& headers, uint32_t flags,
                                    CompressJob* job,
                                    HeaderList* trailers) {
  const int32_t id = Http2StreamId(wire_id);
  Stream* st;
  int err = StreamFor(id, false, &st);
  if (err != kResultOk) {
    job->Destroy();
    return err;
  }
  if (job->input_size() < CompressJob::kAsyncThreshold) {
    if (job->RunInline() != 0) {
      job->Destroy();
      return kResultInvalid;
    }
    return FinishCompressed(st, status, headers, flags, job, trailers);
  }
  // Marked responded now (a second respond fails, writes are refused);
  // submitted to nghttp2 once the work is done.
  st->responded = true;
  st->ended = true;
  st->pending = std::make_unique<PendingCompress>(
      this, id, status, std::move(headers), flags, trailers, job);
  int r = job->Queue(conn_->listener()->loop(), st->pending.get());
  if (r != 0) {
    st->pending.reset();  // destroys the job (not queued)
    return kResultInvalid;
  }
  return kResultOk;
}

int Http2Session::FinishCompressed(Stream* st, int status,
                                   HeaderList& headers, uint32_t flags,
                                   CompressJob* job,
                                   HeaderList* trailers) {
  int32_t id = st->id;
  size_t n = job->output_size();
  headers.Add("content-length", std::to_string(n));
  st->ended = false;
  st->compressor.reset();
  int err = SubmitResponse(st, status, headers, flags);
  if (err != kResultOk || st->no_body || !st->queue) {
    job->Destroy();
    return err;
  }
  if (n < 4096) {
    st->queue->Push(job->output(), n, nullptr);
    job->Destroy();
  } else {
    st->queue->Push(job->output(), n, new JobOutputRef(job));
  }
  return End(id, trailers);
}

void Http2Session::OnCompressDone(int32_t id, CompressJob* job, int status) {
  Stream* st = dead() ? nullptr : Find(id);
  if (!st || !st->pending) {
    job->Destroy();
    if (st) st->pending.reset();
    return;
  }
  std::unique_ptr<PendingCompress> p = std::move(st->pending);
  Listener* l = conn_->listener();
  // From uv's after-work callback: the embedder's scopes (a stream close
  // may reach JS) and one flush at the end.
  l->BeginDispatch();
  if (status != 0) {
    job->Destroy();
    ResetStream(id, NGHTTP2_INTERNAL_ERROR, false);
  } else if (FinishCompressed(st, p->status, p->headers, p->flags, job,
                              p->trailers.get()) != kResultOk) {
    ResetStream(id, NGHTTP2_INTERNAL_ERROR, false);
  }
  conn_->MarkDirty();
  l->EndDispatch();
}

}  // namespace sluice
