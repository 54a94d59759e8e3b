#include "core/http3/http3_compression.h"

#include <utility>

namespace sluice {

Http3Compression::~Http3Compression() {
  DropStream();
  // A job a worker still runs is freed by its after-work callback.
  if (job_ != nullptr) job_->Destroy();
  if (ready_.job != nullptr) ready_.job->Destroy();
}

bool Http3Compression::StartStream(uv_loop_t* loop, const CompressParams& params) {
  if (stream_ != nullptr || job_ != nullptr) return false;
  stream_ = CompressStream::Create(loop, params, this);
  return stream_ != nullptr;
}

int Http3Compression::Write(const uint8_t* data, size_t len, ExternalRef* ref,
                            std::string* out) {
  if (stream_ == nullptr) {
    if (ref != nullptr) ref->Release();
    return kCompressEStream;
  }
  return stream_->Write(reinterpret_cast<const char*>(data), len, Compressor::kNoFlush, ref,
                        out);
}

int Http3Compression::Flush(std::string* out) {
  if (stream_ == nullptr) return CompressStream::kInline;
  return stream_->Write(nullptr, 0, Compressor::kSyncFlush, nullptr, out);
}

int Http3Compression::Finish(std::string* out) {
  if (stream_ == nullptr) return kCompressEStream;
  return stream_->Finish(nullptr, 0, nullptr, out);
}

void Http3Compression::DropStream() {
  if (stream_ == nullptr) return;
  stream_->Destroy();  // the sink is not called after this
  stream_ = nullptr;
}

int Http3Compression::QueueBody(uv_loop_t* loop, CompressJob* job) {
  if (stream_ != nullptr || job_ != nullptr) {
    job->Destroy();
    return UV_EINVAL;
  }
  int r = job->Queue(loop, this);
  if (r != 0) {
    job->Destroy();
    return r;
  }
  job_ = job;
  return 0;
}

void Http3Compression::TakeReady(Ready* r) {
  *r = std::move(ready_);
  ready_ = Ready();
}

void Http3Compression::OnCompressed(CompressStream* s, CompressStream::Result& r) {
  (void)s;
  if (ready_.out.empty()) {
    ready_.out = std::move(r.out);
  } else {
    ready_.out.append(r.out);
  }
  ready_.finished = ready_.finished || r.finished;
  ready_.drain = ready_.drain || r.drain;
  if (r.error != 0 && ready_.error == 0) ready_.error = r.error;
  owner_->OnCompressionReady(id_);
}

void Http3Compression::OnCompressDone(CompressJob* job, int status) {
  job_ = nullptr;
  if (status != 0) {
    job->Destroy();
    ready_.error = status;
  } else {
    ready_.job = job;
  }
  owner_->OnCompressionReady(id_);
}

}  // namespace sluice
