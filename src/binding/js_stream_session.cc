#include "binding/js_stream_session.h"

#include <string>

#include "binding/js_body_done.h"
#include "binding/js_compress.h"
#include "binding/js_file.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"
#include "core/compress/compress_job.h"
#include "core/net/output_queue.h"

namespace sluice {

namespace {

// Flags of respond / end that the core reads (Http2RespondFlags); the
// others are the binding's (wire_protocol.h).
constexpr uint32_t kCoreRespondFlags = kH2EndStream | kH2WaitForTrailers;

// `h` from a serialized block (wire::kH2Http1Block: "Name: value\r\n"
// lines; else "name\0value\0" pairs), after ":status" when status > 0,
// with the session's Date under wire::kH2AddDate. `text`: scratch for the
// block's bytes (nullptr: a local one).
void BuildHeaders(napi_env env, StreamSession* s, int status, napi_value block, uint32_t flags,
                  HeaderList* h, std::string* text = nullptr) {
  if (status > 0) h->AddStatus(status);
  if (block != nullptr && IsString(env, block)) {
    std::string local;
    if (text == nullptr) text = &local;
    Latin1(env, block, text);
    if (flags & wire::kH2Http1Block) {
      h->AddHttp1Block(*text);
    } else {
      h->AddPairs(*text);
    }
  }
  if ((flags & wire::kH2AddDate) && !h->Has("date")) {
    std::string_view date = s->DateValue();
    if (!date.empty()) h->Add("date", date);
  }
}

// The optional trailer block info[at] into `t` (empty when nullish).
void ReadTrailers(const Napi::CallbackInfo& info, size_t at, StreamSession* s, uint32_t flags,
                  HeaderList* t) {
  if (info.Length() > at && !IsNullish(info.Env(), info[at])) {
    BuildHeaders(info.Env(), s, 0, info[at], flags & wire::kH2Http1Block, t);
  }
}

// The head arguments of respond / info / respondCompressed: info[1] the
// status, info[2] the header block, info[3] the flags (into *flags; only
// `block_flags` of them shape the block). Returns the status.
int ReadHead(const Napi::CallbackInfo& info, StreamSession* s, uint32_t block_flags,
             uint32_t* flags, HeaderList* h, std::string* text = nullptr) {
  int status = info[1].As<Napi::Number>().Int32Value();
  *flags = info[3].As<Napi::Number>().Uint32Value();
  BuildHeaders(info.Env(), s, status, info[2], *flags & block_flags, h, text);
  return status;
}

// One body chunk (a string as UTF-8, or a Uint8Array/Buffer): small ones
// copied, larger ones referenced (an OwnedBytes of the string's bytes, or
// the Buffer itself) until sent or compressed.
int WriteChunk(napi_env env, StreamSession* s, uint64_t id, napi_value chunk) {
  if (IsString(env, chunk)) {
    std::string bytes;
    Utf8(env, chunk, &bytes);
    size_t len = bytes.size();
    if (len < kCopyBelow) return s->Write(id, bytes.data(), len, nullptr);
    OwnedBytes* ref = new OwnedBytes(std::move(bytes));
    return s->Write(id, ref->data(), len, ref);
  }
  const char* data;
  size_t len;
  if (!GetBytes(env, chunk, &data, &len)) return kResultBadBody;
  if (len < kCopyBelow) return s->Write(id, data, len, nullptr);
  return s->Write(id, data, len, new NapiValueRef(env, chunk));
}

// A call's result: an error as it is, else whether to wait for drain.
int Result(StreamSession* s, uint64_t id, int err) {
  if (err < 0) return err;
  return s->NeedsDrain(id) ? wire::kResultWaitDrain : kResultOk;
}

}  // namespace

int StreamCalls::Respond(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                         StreamScratch* scratch) {
  napi_env env = info.Env();
  uint32_t flags;
  HeaderList& h = scratch->head;
  h.Clear();
  int status = ReadHead(info, s, ~0u, &flags, &h, &scratch->block);
  bool has_body = info.Length() > 4 && !IsNullish(env, info[4]);
  bool whole = (flags & wire::kH2EndAfterBody) != 0;
  if (whole && !h.Has("content-length") && status != 204 && status != 304 && status >= 200 &&
      !s->IsHeadRequest(id)) {
    // The whole body is known (compat res.end(body)): as HTTP/1.1 does,
    // tell its length (not for responses that have no body).
    size_t len = 0;
    if (has_body && IsString(env, info[4])) {
      napi_get_value_string_utf8(env, info[4], nullptr, 0, &len);
    } else if (has_body) {
      const char* data;
      if (!GetBytes(env, info[4], &data, &len)) len = 0;
    }
    h.Add("content-length", std::to_string(len));
  }
  bool has_trailers = info.Length() > 5 && !IsNullish(env, info[5]);
  uint32_t core_flags = flags & kCoreRespondFlags;
  // A whole response with neither body nor trailers ends with its head.
  if (whole && !has_body && !has_trailers) core_flags |= kH2EndStream;
  int err = s->Respond(id, status, h, core_flags);
  if (err == 0 && has_body) err = WriteChunk(env, s, id, info[4]);
  if (err == 0 && whole && (core_flags & kH2EndStream) == 0) {
    HeaderList t;
    ReadTrailers(info, 5, s, flags, &t);
    err = s->End(id, &t);
  }
  return Result(s, id, err);
}

int StreamCalls::Info(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                      StreamScratch*) {
  uint32_t flags;
  HeaderList h;
  ReadHead(info, s, wire::kH2Http1Block, &flags, &h);
  return s->SendInformational(id, h);
}

int StreamCalls::Write(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                       StreamScratch*) {
  napi_env env = info.Env();
  int err = 0;
  if (!IsNullish(env, info[1])) err = WriteChunk(env, s, id, info[1]);
  if (err == 0 && info.Length() > 2 && info[2].ToBoolean().Value()) {
    err = s->FlushCompression(id);
  }
  return Result(s, id, err);
}

int StreamCalls::End(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                     StreamScratch*) {
  napi_env env = info.Env();
  uint32_t flags =
      info.Length() > 3 && info[3].IsNumber() ? info[3].As<Napi::Number>().Uint32Value() : 0;
  int err = 0;
  if (info.Length() > 1 && !IsNullish(env, info[1])) err = WriteChunk(env, s, id, info[1]);
  if (err == 0) {
    HeaderList t;
    ReadTrailers(info, 2, s, flags, &t);
    err = s->End(id, &t);
  }
  return Result(s, id, err);
}

int StreamCalls::SendTrailers(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                              StreamScratch*) {
  HeaderList t;
  BuildHeaders(info.Env(), s, 0, info[1], 0, &t);
  return s->SendTrailers(id, t);
}

int StreamCalls::RstStream(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                           StreamScratch*) {
  uint32_t code = info[1].As<Napi::Number>().Uint32Value();
  bool after_end = info.Length() > 2 && info[2].ToBoolean().Value();
  return s->ResetStream(id, code, after_end);
}

int StreamCalls::PauseStream(const Napi::CallbackInfo&, StreamSession* s, uint64_t id,
                             StreamScratch*) {
  s->Pause(id, true);
  return kResultOk;
}

int StreamCalls::ResumeStream(const Napi::CallbackInfo&, StreamSession* s, uint64_t id,
                              StreamScratch*) {
  s->Pause(id, false);
  return kResultOk;
}

int StreamCalls::Consume(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                         StreamScratch*) {
  if (info.Length() < 2 || !info[1].IsNumber()) return kResultInvalid;
  double n = info[1].As<Napi::Number>().DoubleValue();
  if (n > 0) s->Consume(id, static_cast<size_t>(n));
  return kResultOk;
}

int StreamCalls::Compress(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                          StreamScratch*) {
  CompressParams p;
  if (!CompressArgs(info, 1, &p)) return kResultInvalid;
  return s->StartCompression(id, p);
}

int StreamCalls::RespondCompressed(const Napi::CallbackInfo& info, StreamSession* s,
                                   uint64_t id, StreamScratch*) {
  CompressParams p;
  if (!CompressArgs(info, 6, &p)) return kResultBadBody;
  CompressJob* job = BodyJob(info.Env(), info[4], p);
  if (job == nullptr) return kResultBadBody;
  uint32_t flags;
  HeaderList h;
  int status = ReadHead(info, s, ~0u, &flags, &h);
  HeaderList t;
  ReadTrailers(info, 5, s, flags, &t);
  int err = s->RespondCompressed(id, status, h, flags & kCoreRespondFlags, job, &t);
  if (err == kResultInvalid) err = kResultCompressFailed;
  return Result(s, id, err);
}

int StreamCalls::RespondFile(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id,
                             StreamScratch*) {
  napi_env env = info.Env();
  if (info.Length() < 3 || !info[1].IsObject() || !info[2].IsFunction()) return kResultInvalid;
  JsFile* file = JsFile::Unwrap(info[1].As<Napi::Object>());
  PipeSource* source = file != nullptr ? file->TakeSource() : nullptr;
  if (source == nullptr) return kResultInvalid;
  // Response compression: FileSource -> CompressTransform -> the pipe.
  source = WrapCompression(info, 3, source);
  if (source == nullptr) return kResultCompressFailed;
  JsBodyDone* done = new JsBodyDone(env, info[2]);
  int r = s->StartPipeBody(id, source, done);  // takes the source
  if (r != kResultOk) done->Discard();          // not started: never called
  return r;
}

}  // namespace sluice
