#include "core/compress/compress_job.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/compress/compress_gate.h"
#include "core/compress/worker_priority.h"

namespace sluice {

namespace {

std::atomic<uint64_t> g_jobs{0};

// Owns a malloc'd output block while it sits in an OutputQueue.
class MallocRef final : public ExternalRef {
 public:
  explicit MallocRef(char* p) : p_(p) {}
  void Release() override {
    free(p_);
    delete this;
  }

 private:
  char* p_;
};

}  // namespace

uint64_t CompressJob::live_count() { return g_jobs.load(); }

CompressJob::CompressJob(const CompressParams& params, const char* data,
                         size_t len, ExternalRef* owner)
    : params_(params), in_(data), in_len_(len), owner_(owner) {
  g_jobs++;
  req_.data = this;
}

CompressJob::~CompressJob() {
  if (owner_) owner_->Release();
  free(out_);
  g_jobs--;
}

CompressJob* CompressJob::Create(const CompressParams& params,
                                 const char* data, size_t len,
                                 ExternalRef* owner) {
  return new CompressJob(params, data, len, owner);
}

CompressJob* CompressJob::Create(const CompressParams& params,
                                 std::string&& data) {
  CompressJob* j = new CompressJob(params, nullptr, 0, nullptr);
  j->owned_ = std::move(data);
  j->in_ = j->owned_.data();
  j->in_len_ = j->owned_.size();
  return j;
}

int CompressJob::Compress() {
  Compressor c;
  int r = c.Init(params_, in_len_);
  if (r != 0) return r;
  size_t cap = Compressor::Bound(params_.coding, in_len_);
  char* out = static_cast<char*>(malloc(cap));
  if (out == nullptr) return kCompressENoMem;
  const uint8_t* in = reinterpret_cast<const uint8_t*>(in_);
  size_t in_len = in_len_;
  uint8_t* o = reinterpret_cast<uint8_t*>(out);
  size_t room = cap;
  bool done = false;
  r = c.Process(&in, &in_len, &o, &room, Compressor::kFinish, &done);
  if (r != 0 || !done) {
    free(out);
    return r < 0 ? r : kCompressEStream;  // the bound was not enough
  }
  out_len_ = cap - room;
  // Give back the slack of the bound (large blocks shrink in place).
  char* shrunk = static_cast<char*>(realloc(out, out_len_ > 0 ? out_len_ : 1));
  out_ = shrunk != nullptr ? shrunk : out;
  return 0;
}

int CompressJob::RunInline() {
  result_ = Compress();
  return result_;
}

int CompressJob::Queue(uv_loop_t* loop, Client* client) {
  client_ = client;
  int r = compress_gate::Queue(loop, &req_, OnWork, OnAfterWork);
  if (r == 0) in_flight_ = true;
  return r;
}

void CompressJob::OnWork(uv_work_t* req) {
  CompressJob* j = static_cast<CompressJob*>(req->data);
  WorkerPriorityScope background;  // the loop thread goes first
  j->result_ = j->Compress();
}

void CompressJob::OnAfterWork(uv_work_t* req, int status) {
  CompressJob* j = static_cast<CompressJob*>(req->data);
  compress_gate::Done();  // first: frees the slot, may start a waiter
  j->in_flight_ = false;
  if (j->destroyed_) {
    delete j;
    return;
  }
  int r = status != 0 ? status : j->result_;
  if (j->client_) j->client_->OnCompressDone(j, r);
}

void CompressJob::MoveOutputTo(OutputQueue& q) {
  if (out_len_ == 0) return;
  if (out_len_ < kCopyBelow) {
    q.Append(out_, out_len_);
    return;
  }
  q.AppendExternal(out_, out_len_, new MallocRef(out_));
  out_ = nullptr;
  out_len_ = 0;
}

void CompressJob::Destroy() {
  if (in_flight_) {
    destroyed_ = true;
    client_ = nullptr;
    return;
  }
  delete this;
}

}  // namespace sluice
