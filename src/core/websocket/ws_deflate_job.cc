#include "core/websocket/ws_deflate_job.h"

#include <atomic>

#include "core/compress/compress_gate.h"
#include "core/compress/worker_priority.h"

namespace sluice {

namespace {
std::atomic<uint64_t> g_jobs{0};
}  // namespace

uint64_t WsDeflateJob::live_count() { return g_jobs.load(); }

WsDeflateJob::WsDeflateJob(WsDeflate* deflate, uint8_t opcode, std::string&& input)
    : deflate_(deflate), opcode_(opcode), input_(std::move(input)) {
  g_jobs++;
  req_.data = this;
}

WsDeflateJob::~WsDeflateJob() { g_jobs--; }

int WsDeflateJob::Queue(uv_loop_t* loop, Client* client) {
  client_ = client;
  const int r = compress_gate::Queue(loop, &req_, OnWork, OnAfterWork);
  if (r == 0) in_flight_ = true;
  return r;
}

void WsDeflateJob::Orphan(std::unique_ptr<WsDeflate> deflate) {
  orphaned_ = std::move(deflate);
  Destroy();
}

void WsDeflateJob::Destroy() {
  if (in_flight_) {
    destroyed_ = true;
    client_ = nullptr;
    return;
  }
  delete this;
}

void WsDeflateJob::OnWork(uv_work_t* req) {
  WsDeflateJob* j = static_cast<WsDeflateJob*>(req->data);
  WorkerPriorityScope background;  // the loop thread goes first
  j->ok_ = j->deflate_->Deflate(j->input_.data(), j->input_.size(), &j->output_);
}

void WsDeflateJob::OnAfterWork(uv_work_t* req, int status) {
  WsDeflateJob* j = static_cast<WsDeflateJob*>(req->data);
  compress_gate::Done();  // first: frees the slot, may start a waiter
  j->in_flight_ = false;
  if (j->destroyed_) {
    delete j;  // with an orphaned deflater, if any
    return;
  }
  if (j->client_) j->client_->OnDeflateDone(j, status == 0 && j->ok_);
}

}  // namespace sluice
