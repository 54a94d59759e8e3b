// JsFile (NativeFile in JS): one file response's native side. Opens and
// stats a file on the threadpool (FileSource) — or takes it from this
// environment's OpenFileCache, synchronously — reports the stat to JS once
// (for statCheck and Content-Length), then hands the FileSource to a
// protocol's pipe sink: HTTP/1.1 now (respondHttp1), HTTP/2 through the
// same FileSource when its stream sink lands (see docs in js_file.cc).
//
// Lifetime: the FileSource is owned here until it is handed to a pipe (or
// closed). While the core holds this object as a listener (open in flight,
// pipe running) a strong reference keeps the JS object, and so this, alive;
// it is dropped when the core is done with it. The destructor (GC) closes a
// source never handed over.
#pragma once

#include <napi.h>

#include "binding/addon_data.h"

#include "binding/js_core_handle.h"
#include <string>
#include <utility>
#include <vector>

#include "core/body/file_source.h"
#include "core/files/static_files.h"
#include "core/http1/http1_pipe_body.h"

namespace sluice {


class JsFile final : public Napi::ObjectWrap<JsFile>,
                     private FileSource::OpenListener,
                     private PipeBodyListener,
                     private StaticLookupClient {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit JsFile(const Napi::CallbackInfo& info);
  ~JsFile() override;

  // For protocol sinks outside this file (HTTP/2): takes the opened source
  // (nullptr if none). The caller owns it from then on.
  FileSource* TakeSource();

  // Environment teardown (addon.cc; JS can no longer run): closes a source
  // not handed to a pipe (its open job or read is waited for by the
  // source itself) and makes no JS call from then on.
  void Teardown();

 private:
  // open(pathOrFd, isFd, offset, length, onOpen(err, syscall, stat), useCache)
  //   -> 0 (onOpen follows), 1 (an open-file cache hit: the source is open
  //   now, the stat is in the array given to setStatArray, onOpen is never
  //   called), or a UV_E* code when nothing could be started.
  Napi::Value Open(const Napi::CallbackInfo& info);
  // NativeFile.setStatArray(Float64Array(14)): where hits put the stat.
  static Napi::Value SetStatArray(const Napi::CallbackInfo& info);
  // NativeFile.configureCache(maxEntries, validMs, contentFileMax,
  // contentBytesMax): turns this environment's open-file cache on with
  // these bounds; maxEntries 0 turns it off and forgets every entry.
  static Napi::Value ConfigureCache(const Napi::CallbackInfo& info);
  // NativeFile.cacheStats() -> { hits, misses, contentHits, invalidations,
  // expirations, evictions, entries, contentBytes, fds }
  static Napi::Value CacheStats(const Napi::CallbackInfo& info);
  // range() -> [offset, length, lengthKnown]
  Napi::Value Range(const Napi::CallbackInfo& info);
  // holdHttp1(conn, seq) before conn.respond(): the head waits for the
  // file's first bytes so that both leave in one write (regular files
  // only; a non-regular file's head leaves at once).
  Napi::Value HoldHttp1(const Napi::CallbackInfo& info);
  // respondHttp1(conn, seq, onDone(status)) after conn.respond() sent the
  // head: 0 (pipe running; onDone follows once, unless the connection
  // closes first), 1 (no body: HEAD/204/304, response ended), < 0 error.
  Napi::Value RespondHttp1(const Napi::CallbackInfo& info);
  // lookupStatic(mount, target, head, fields, useCache, flags, etag,
  // lastModified, onAnswer(kind, answer)): the sluice.serveStatic
  // middleware's per-request lookup of `target` under `mount`
  // (NativeFile.staticMount) with the request's conditional / range /
  // Accept-Encoding fields ([name, value, ...], lower-case names); etag /
  // lastModified (strings, else ignored): the response's own validators,
  // which the conditionals then compare with. Returns STATIC_MISS,
  // STATIC_DIRECTORY (a miss that is a directory), the answer (a string,
  // see OnStaticAnswer), STATIC_PENDING (onAnswer follows once from the
  // loop, with kind and, for STATIC_ANSWERED, the answer, unless close()
  // comes first) or -1 (bad arguments). An answer with a body leaves the
  // opened source here (respondHttp1 / an HTTP/2 stream take it as for
  // respondWithFile). flags STATIC_WANT_FILE: a file's answer also
  // carries its path and writes its stat into the setStatArray array.
  Napi::Value LookupStatic(const Napi::CallbackInfo& info);
  // close(): cancels (closes a source not handed to a pipe, cancels a
  // static lookup). Idempotent.
  Napi::Value Close(const Napi::CallbackInfo& info);
  // NativeFile.stats() -> { sources, buffersOutstanding } (leak checks)
  static Napi::Value Stats(const Napi::CallbackInfo& info);

  void OnFileOpened(int err, const char* syscall,
                    const uv_stat_t* st) override;
  void OnPipeBodyDone(int status) override;
  // From the lookup: inside LookupStatic (in_lookup_) or from its job's
  // completion on the loop (no JS scope open; calls onAnswer).
  void OnStaticAnswer(uint64_t tag, StaticAnswer& answer) override;
  void OnStaticFallThrough(uint64_t tag) override;
  // Calls the pending onAnswer(kind[, answer_]) from the loop.
  void StaticDoneAsync(int kind);
  void Hold();
  void Unhold();
  void CallJs(Napi::FunctionReference& fn, size_t argc, napi_value* argv,
              bool from_libuv);
  // Closes source_ (if not handed over) and drops a pending onOpen.
  void CloseSource();

  FileSource* source_ = nullptr;
  Napi::FunctionReference on_open_;
  Napi::FunctionReference on_done_;
  Napi::ObjectReference self_;
  int holds_ = 0;
  // The middleware's lookup (cancelled by close() or the destructor) and
  // its answer, kept for staticAnswer().
  StaticLookupPtr lookup_;
  bool in_lookup_ = false;
  Napi::FunctionReference on_static_;
  bool want_file_ = false;
  // The last answer: "status\0contentLength\0flags[\0value...][\0path]",
  // contentLength -1 for none, flags as wire_protocol.h's STATIC_ANSWER_*.
  std::string answer_;
  AsyncContext async_context_;
  AddonMember<JsFile> addon_;
};

}  // namespace sluice
