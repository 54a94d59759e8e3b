// MemSource: a PipeSource for the fuzz harnesses, standing in for the file
// source of respondWithFile. It produces `total` bytes of the harness's
// body pattern ('a' + offset % 26) in pooled PipeBuffers of up to `piece`
// bytes, answering each Read at once or later (when the driver calls
// Sources::Run, outside any dispatch, as a libuv fs callback would), and
// optionally fails with UV_EIO after `fail_after` buffers. It checks the
// PipeSource contract: one Read outstanding, no Read after Close.
#pragma once

#include <algorithm>
#include <deque>
#include <vector>

#include "core/compress/compress_transform.h"
#include "core/compress/compressor.h"
#include "core/http1/http1_pipe_body.h"
#include "core/body/pipe.h"
#include "harness.h"

namespace fuzz {

class MemSource;

// The sources waiting for the driver to answer their Read.
class Sources {
 public:
  void Add(MemSource* s) { pending_.push_back(s); }
  bool Has(MemSource* s) const {
    return std::find(pending_.begin(), pending_.end(), s) != pending_.end();
  }
  inline void Run();
  size_t live = 0;  // sources not yet freed

 private:
  std::vector<MemSource*> pending_;
};

class MemSource final : public sluice::PipeSource {
 public:
  MemSource(Sources* sources, size_t total, size_t piece, bool async,
            int fail_after)
      : sources_(sources), total_(total), piece_(piece), async_(async),
        fail_after_(fail_after) {
    sources_->live++;
  }
  ~MemSource() override { sources_->live--; }

  void SetClient(sluice::PipeSourceClient* c) override { client_ = c; }
  void Read(size_t max) override {
    FUZZ_CHECK(!closed_, "Read after Close");
    FUZZ_CHECK(!reading_, "two Reads outstanding");
    FUZZ_CHECK(max > 0, "Read of 0 bytes");
    reading_ = true;
    if (async_) {
      sources_->Add(this);
    } else {
      Answer();
    }
  }
  void Close() override {
    FUZZ_CHECK(!closed_, "Close twice");
    closed_ = true;
    if (!sources_->Has(this) && answering_ == 0) delete this;
  }

  // Answers the outstanding Read (or frees a source closed meanwhile).
  // Returns false when the source was freed.
  bool Answer() {
    if (closed_) {
      if (answering_ == 0) delete this;
      return false;
    }
    reading_ = false;
    answering_++;
    if (fail_after_ == 0) {
      client_->OnSourceError(UV_EIO);
    } else if (produced_ >= total_) {
      client_->OnSourceEnd();
    } else {
      sluice::PipeBuffer* b = sluice::PipeBufferPool::ForThisThread()->Acquire();
      size_t n = std::min({piece_, total_ - produced_, b->capacity()});
      for (size_t i = 0; i < n; i++) {
        b->data()[i] = static_cast<char>('a' + (base_ + produced_ + i) % 26);
      }
      b->size = n;
      produced_ += n;
      if (fail_after_ > 0) fail_after_--;
      client_->OnSourceData(b);
    }
    answering_--;
    if (closed_ && answering_ == 0 && !sources_->Has(this)) {
      delete this;
      return false;
    }
    return true;
  }
  // The pattern continues from this offset of the response body.
  void set_base(size_t b) { base_ = b; }

 private:
  Sources* sources_;
  sluice::PipeSourceClient* client_ = nullptr;
  size_t total_, piece_;
  bool async_;
  int fail_after_;
  size_t produced_ = 0;
  size_t base_ = 0;
  bool reading_ = false;
  bool closed_ = false;
  int answering_ = 0;  // Answer calls on the stack (a sync Read nests)
};

void Sources::Run() {
  // One at a time: answering one source may close others (a failed body
  // destroys the connection and every pipe on it); a source still listed
  // here is freed by its own turn, never by Close.
  for (int i = 0; i < 4096 && !pending_.empty(); i++) {
    MemSource* s = pending_.front();
    pending_.erase(pending_.begin());
    s->Answer();
  }
}

// Hears how a pipe body ended; exactly once per started pipe.
struct PipeDone final : sluice::PipeBodyListener {
  int calls = 0;
  int status = 0;
  void OnPipeBodyDone(int st) override {
    FUZZ_CHECK(calls == 0, "OnPipeBodyDone twice");
    calls++;
    status = st;
  }
};

// After the loop is closed: nothing the run created is still alive —
// referenced bodies released, pipe sources freed (answering the reads of
// sources closed while one was pending), each pipe body ended once, pooled
// buffers returned, compress transforms and their compressors freed.
inline void CheckNothingLeft(int live_refs, Sources& sources,
                             const std::deque<PipeDone>& pipes) {
  FUZZ_CHECK(live_refs == 0, "%d external refs not released", live_refs);
  sources.Run();
  FUZZ_CHECK(sources.live == 0, "%zu pipe sources not freed", sources.live);
  for (auto& p : pipes) {
    FUZZ_CHECK(p.calls == 1, "a pipe body ended %d times", p.calls);
  }
  FUZZ_CHECK(sluice::PipeBufferPool::ForThisThread()->outstanding() == 0,
             "%zu pipe buffers not returned",
             sluice::PipeBufferPool::ForThisThread()->outstanding());
  FUZZ_CHECK(sluice::CompressTransform::live_count() == 0,
             "%llu compress transforms not freed",
             static_cast<unsigned long long>(sluice::CompressTransform::live_count()));
  FUZZ_CHECK(sluice::Compressor::live_count() == 0, "%llu compressors not freed",
             static_cast<unsigned long long>(sluice::Compressor::live_count()));
}

}  // namespace fuzz
