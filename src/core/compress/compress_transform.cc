#include "core/compress/compress_transform.h"

#include <atomic>

#include "core/compress/compress_gate.h"
#include "core/compress/worker_priority.h"

namespace sluice {

namespace {
std::atomic<uint64_t> g_live{0};
}  // namespace

uint64_t CompressTransform::live_count() { return g_live.load(); }

CompressTransform::CompressTransform(uv_loop_t* loop, PipeBufferPool* pool)
    : loop_(loop), pool_(pool) {
  req_.data = this;
  g_live++;
}

CompressTransform::~CompressTransform() {
  if (in_) in_->Unref();
  if (out_) out_->Unref();
  g_live--;
}

CompressTransform* CompressTransform::Create(uv_loop_t* loop,
                                             PipeBufferPool* pool,
                                             const CompressParams& params) {
  CompressTransform* t = new CompressTransform(loop, pool);
  if (t->comp_.Init(params) != 0) {
    delete t;
    return nullptr;
  }
  return t;
}

void CompressTransform::SetUpstream(PipeSource* upstream) {
  upstream_ = upstream;
  upstream_->SetClient(this);
}

bool CompressTransform::Leave() {
  if (--depth_ == 0 && closed_ && !in_flight_) {
    delete this;
    return false;
  }
  return true;
}

void CompressTransform::Read(size_t max_bytes) {
  if (max_bytes > 0) read_size_ = max_bytes;
  wanted_ = true;
  Enter();
  Advance();
  Leave();
}

void CompressTransform::Advance() {
  // Loops while answers come synchronously (an upstream with buffered
  // output answers inside Read).
  while (!closed_ && !failed_ && !in_flight_ && wanted_) {
    if (finished_) {
      wanted_ = false;
      client_->OnSourceEnd();
      return;
    }
    bool have_input = in_ != nullptr && in_off_ < in_->size;
    if (have_input || upstream_ended_) {
      StartWork();
      return;
    }
    if (upstream_reading_) return;
    upstream_reading_ = true;
    upstream_->Read(read_size_);
    if (upstream_reading_) return;  // answers later
  }
}

void CompressTransform::StartWork() {
  out_ = pool_->Acquire();
  if (out_ == nullptr) {
    Fail(UV_ENOMEM);
    return;
  }
  flush_ = upstream_ended_ ? Compressor::kFinish : Compressor::kNoFlush;
  in_flight_ = true;
  int r = compress_gate::Queue(loop_, &req_, OnWork, OnAfterWork);
  if (r != 0) {
    in_flight_ = false;
    out_->Unref();
    out_ = nullptr;
    Fail(r);
  }
}

void CompressTransform::OnWork(uv_work_t* req) {
  CompressTransform* t = static_cast<CompressTransform*>(req->data);
  WorkerPriorityScope background;  // the loop thread goes first
  const uint8_t* in = nullptr;
  size_t in_len = 0;
  if (t->in_ != nullptr) {
    in = reinterpret_cast<const uint8_t*>(t->in_->data()) + t->in_off_;
    in_len = t->in_->size - t->in_off_;
  }
  size_t before = in_len;
  uint8_t* out = reinterpret_cast<uint8_t*>(t->out_->data());
  size_t room = t->out_->capacity();
  bool done = false;
  int r = t->comp_.Process(&in, &in_len, &out, &room, t->flush_, &done);
  t->result_ = r < 0 ? r : 0;
  t->consumed_ = before - in_len;
  t->done_ = done;
  t->out_->size = t->out_->capacity() - room;
}

void CompressTransform::OnAfterWork(uv_work_t* req, int status) {
  CompressTransform* t = static_cast<CompressTransform*>(req->data);
  compress_gate::Done();  // first: frees the slot, may start a waiter
  t->in_flight_ = false;
  if (t->closed_) {
    if (t->depth_ == 0) delete t;
    return;
  }
  PipeBuffer* out = t->out_;
  t->out_ = nullptr;
  if (status != 0 || t->result_ != 0) {
    out->Unref();
    t->Fail(status != 0 ? status : UV_EIO);
    return;
  }
  t->in_off_ += t->consumed_;
  if (t->in_ != nullptr && t->in_off_ >= t->in_->size) {
    t->in_->Unref();
    t->in_ = nullptr;
    t->in_off_ = 0;
  }
  if (t->done_) t->finished_ = true;
  t->Enter();
  if (out->size > 0) {
    t->wanted_ = false;
    t->client_->OnSourceData(out);  // the reference passes on
  } else {
    out->Unref();
    t->Advance();  // more input (or the end) is needed for output
  }
  t->Leave();
}

void CompressTransform::OnSourceData(PipeBuffer* buf) {
  upstream_reading_ = false;
  if (closed_ || failed_) {
    buf->Unref();
    return;
  }
  in_ = buf;
  in_off_ = 0;
  Enter();
  Advance();
  Leave();
}

void CompressTransform::OnSourceEnd() {
  upstream_reading_ = false;
  upstream_ended_ = true;
  if (closed_ || failed_) return;
  Enter();
  Advance();
  Leave();
}

void CompressTransform::OnSourceError(int err) {
  upstream_reading_ = false;
  if (closed_ || failed_) return;
  Fail(err);
}

void CompressTransform::Fail(int err) {
  failed_ = true;
  wanted_ = false;
  Enter();
  client_->OnSourceError(err);
  Leave();
}

void CompressTransform::Close() {
  if (closed_) return;
  closed_ = true;
  if (upstream_) {
    upstream_->Close();  // frees itself once its own I/O is done
    upstream_ = nullptr;
  }
  if (!in_flight_ && depth_ == 0) delete this;
}

}  // namespace sluice
