// WsDeflateJob: one large outgoing WebSocket message deflated on the libuv
// threadpool with its connection's own deflater (permessage-deflate, RFC
// 7692), so a 1 MiB send does not block the loop for the milliseconds zlib
// takes.
//
// Why one at a time per connection: with context takeover a message is
// deflated against the window the previous one left, so the deflater is
// used by one job at a time and the session holds every later send
// (frames, control frames, the close) behind the job, in order, until it
// is done (ws_session.cc). Small messages stay inline: the threadpool
// round trip (~150 µs, measured for CompressJob in compress_job.h) costs
// more than deflating them.
//
// Threads and lifetime: the worker touches only the job's input, output
// and the deflater's deflate stream; the loop thread may meanwhile inflate
// with the same WsDeflate (its inflate stream is separate memory and the
// config is read-only). The deflater belongs to the session; if the
// session goes while the job runs, it hands the deflater to the job
// (Orphan), which frees both once the worker is done. Environment teardown
// waits for the job (LoopTracked).
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/common/loop_tracked.h"
#include "core/websocket/ws_deflate.h"

namespace sluice {

class WsDeflateJob {
 public:
  // Messages of at least this many bytes are deflated on the threadpool
  // (level-1 DEFLATE of 64 KiB takes ~0.3–0.6 ms here, a few times the
  // hand-off; below it the hand-off is not worth its latency).
  static constexpr size_t kAsyncThreshold = 64 * 1024;

  class Client {
   public:
    virtual ~Client() = default;
    // On the loop thread once the work finished: ok is false when zlib
    // failed or the job could not run (the message is then sent plain,
    // from input()). The client calls job->Destroy() when done with it.
    virtual void OnDeflateDone(WsDeflateJob* job, bool ok) = 0;
  };

  // `deflate` is borrowed (the session's) and must stay alive until
  // OnDeflateDone, or be handed over with Orphan.
  WsDeflateJob(WsDeflate* deflate, uint8_t opcode, std::string&& input);
  WsDeflateJob(const WsDeflateJob&) = delete;
  WsDeflateJob& operator=(const WsDeflateJob&) = delete;

  // Deflates on the threadpool; the client hears OnDeflateDone once.
  // Returns 0 or a UV_E* error (nothing queued: the caller deflates
  // inline or sends plain, then destroys the job).
  int Queue(uv_loop_t* loop, Client* client);
  // The client is gone: Destroy, and the job owns `deflate` from now on
  // (freed with the job, after the work if it is in flight).
  void Orphan(std::unique_ptr<WsDeflate> deflate);
  // Frees the job now, or after the in-flight work completes (then the
  // client is not called).
  void Destroy();

  uint8_t opcode() const { return opcode_; }
  const std::string& input() const { return input_; }
  std::string& output() { return output_; }
  size_t input_size() const { return input_.size(); }

  // Jobs alive (tests: leak checks after a connection goes mid-job).
  static uint64_t live_count();

 private:
  ~WsDeflateJob();
  static void OnWork(uv_work_t* req);
  static void OnAfterWork(uv_work_t* req, int status);

  WsDeflate* deflate_;
  std::unique_ptr<WsDeflate> orphaned_;  // set by Orphan
  uint8_t opcode_;
  std::string input_;
  std::string output_;
  bool ok_ = false;
  uv_work_t req_;
  LoopTracked tracked_;
  Client* client_ = nullptr;
  bool in_flight_ = false;
  bool destroyed_ = false;
};

}  // namespace sluice
