#include "core/compress/compress_stream.h"

#include <atomic>
#include <utility>

#include "core/compress/compress_gate.h"
#include "core/compress/worker_priority.h"

namespace sluice {

namespace {
std::atomic<uint64_t> g_live{0};
std::atomic<uint64_t> g_live_brotli{0};
}  // namespace

uint64_t CompressStream::live_count() { return g_live.load(); }
uint64_t CompressStream::live_brotli_count() { return g_live_brotli.load(); }

CompressStream::CompressStream(uv_loop_t* loop, Sink* sink, bool brotli)
    : loop_(loop), sink_(sink), brotli_(brotli) {
  req_.data = this;
  g_live++;
  if (brotli_) g_live_brotli++;
}

CompressStream::~CompressStream() {
  ReleaseOps(&batch_);
  for (Op& op : ops_) {
    if (op.owner) op.owner->Release();
  }
  if (brotli_) g_live_brotli--;
  g_live--;
}

CompressStream* CompressStream::Create(uv_loop_t* loop,
                                       const CompressParams& params,
                                       Sink* sink, uint64_t size_hint) {
  CompressStream* s =
      new CompressStream(loop, sink, params.coding == Coding::kBrotli);
  CompressParams p = params;
  if (p.coding == Coding::kBrotli && p.brotli_lgwin == 0) {
    p.brotli_lgwin = kBrotliLgwin;
  }
  if (s->comp_.Init(p, size_hint) != 0) {
    delete s;
    return nullptr;
  }
  return s;
}

void CompressStream::ReleaseOps(std::vector<Op>* ops) {
  for (Op& op : *ops) {
    if (op.owner) op.owner->Release();
  }
  ops->clear();
}

int CompressStream::Write(const char* data, size_t len,
                          Compressor::Flush flush, ExternalRef* owner,
                          std::string* inline_out) {
  Op op;
  op.data = data;
  op.len = len;
  op.owner = owner;
  op.flush = flush == Compressor::kFinish ? Compressor::kSyncFlush : flush;
  return Submit(std::move(op), inline_out);
}

int CompressStream::Write(std::string&& data, Compressor::Flush flush,
                          std::string* inline_out) {
  Op op;
  op.owned = std::move(data);
  op.is_owned = true;
  op.len = op.owned.size();
  op.flush = flush == Compressor::kFinish ? Compressor::kSyncFlush : flush;
  return Submit(std::move(op), inline_out);
}

int CompressStream::Finish(const char* data, size_t len, ExternalRef* owner,
                           std::string* inline_out) {
  Op op;
  op.data = data;
  op.len = len;
  op.owner = owner;
  op.flush = Compressor::kFinish;
  return Submit(std::move(op), inline_out);
}

int CompressStream::Finish(std::string&& data, std::string* inline_out) {
  Op op;
  op.owned = std::move(data);
  op.is_owned = true;
  op.len = op.owned.size();
  op.flush = Compressor::kFinish;
  return Submit(std::move(op), inline_out);
}

int CompressStream::Submit(Op&& op, std::string* inline_out) {
  if (error_ != 0 || finish_queued_ || destroyed_) {
    if (op.owner) op.owner->Release();
    return error_ != 0 ? error_ : kCompressEArgs;
  }
  if (op.flush == Compressor::kFinish) finish_queued_ = true;
  if (WouldRunInline(op.len)) {
    int r = comp_.ProcessAll(op.bytes(), op.len, op.flush, inline_out);
    if (op.owner) op.owner->Release();
    if (r != 0) error_ = r;
    return r != 0 ? r : kInline;
  }
  if (op.owner == nullptr && !op.is_owned && op.len > 0) {
    op.owned.assign(op.data, op.len);  // the caller's bytes die with the call
    op.is_owned = true;
  }
  pending_ += op.len;
  ops_.push_back(std::move(op));
  if (!in_flight_) StartJob();
  if (error_ != 0) return error_;
  if (pending_ > kHighWater) {
    drain_wanted_ = true;
    return kQueuedFull;
  }
  return kQueued;
}

void CompressStream::StartJob() {
  size_t bytes = 0;
  batch_finishes_ = false;
  while (!ops_.empty() && (batch_.empty() || bytes < kBatchMax)) {
    Op& front = ops_.front();
    bytes += front.len;
    if (front.flush == Compressor::kFinish) batch_finishes_ = true;
    batch_.push_back(std::move(front));
    ops_.pop_front();
  }
  out_.clear();
  result_ = 0;
  in_flight_ = true;
  int r = compress_gate::Queue(loop_, &req_, OnWork, OnAfterWork);
  if (r != 0) {
    in_flight_ = false;
    error_ = r;
  }
}

// Threadpool worker: the batch's ops in order into out_.
void CompressStream::OnWork(uv_work_t* req) {
  CompressStream* s = static_cast<CompressStream*>(req->data);
  WorkerPriorityScope background;  // the loop thread goes first
  for (Op& op : s->batch_) {
    int r = s->comp_.ProcessAll(op.bytes(), op.len, op.flush, &s->out_);
    if (r != 0) {
      s->result_ = r;
      return;
    }
  }
}

// Loop thread: hands the output to the sink, then starts the next job.
void CompressStream::OnAfterWork(uv_work_t* req, int status) {
  CompressStream* s = static_cast<CompressStream*>(req->data);
  compress_gate::Done();  // first: frees the slot, may start a waiter
  s->in_flight_ = false;
  size_t done = 0;
  for (const Op& op : s->batch_) done += op.len;
  ReleaseOps(&s->batch_);
  s->pending_ -= done;
  if (s->destroyed_) {
    if (s->depth_ == 0) delete s;
    return;
  }
  Result r;
  r.out.swap(s->out_);
  r.error = status != 0 ? status : s->result_;
  r.finished = r.error == 0 && s->batch_finishes_;
  if (r.error != 0) s->error_ = r.error;
  // Start the next job before the sink runs: the worker compresses while
  // the loop writes this output.
  if (s->error_ == 0 && !s->ops_.empty()) s->StartJob();
  if (s->error_ != 0) {
    r.error = s->error_;
    r.finished = false;
  }
  if (s->drain_wanted_ && s->pending_ <= kHighWater) {
    s->drain_wanted_ = false;
    r.drain = true;
  }
  s->depth_++;
  s->sink_->OnCompressed(s, r);
  s->depth_--;
  if (s->destroyed_ && s->depth_ == 0 && !s->in_flight_) delete s;
}

void CompressStream::Destroy() {
  if (destroyed_) return;
  destroyed_ = true;
  sink_ = nullptr;
  if (!in_flight_ && depth_ == 0) delete this;
}

}  // namespace sluice
