// Response compression for JS (lib/compress/compression.js decides; this encodes):
//
//   respondCompressed(conn, seq, statusFlags, reason, headerBlock, body,
//                     trailers, coding, level, brotliQuality) -> result
//       res.end(body) with a negotiated coding: the body is compressed in
//       one pass, inline below CompressJob::kAsyncThreshold, otherwise on
//       the threadpool; head (Content-Length = compressed size) and body
//       are queued when it is done. The response keeps its place among
//       pipelined ones: nothing of it is queued before, and the responses
//       after it are staged by the session until it ends.
//   new NativeCompressor(coding, level, brotliQuality)
//       .write(conn, seq, chunk, flush) -> result (res.write; flush: 1 =
//              sync flush, what res.flush() asks for)
//       .end(conn, seq, chunk, trailers) -> result (finishes the stream)
//       .close()  frees the compressor state (reset, destroy)
//   NativeFile.respondHttp1(conn, seq, onDone, coding, level, quality)
//       file bodies: FileSource → CompressTransform → sink (threadpool,
//       chunk by chunk; see core/compress/compress_transform.h)
//   compressBuffer(coding, level, brotliQuality, buffer) -> Buffer
//       one-shot, inline (tests compare it with node's zlib)
//   compressionInfo() -> where zlib and brotli resolve (dladdr), versions
//   compressionStats() -> { compressors, jobs, transforms } alive (leak checks)
//
// Results are those of JsConnection's methods: >= 0 (bit 0: wait for
// drain) or a negative ResponseResult (core/common/result.h). Nothing
// throws except on bad arguments from lib/.
#pragma once

#include <napi.h>

#include "core/compress/compress_job.h"
#include "core/compress/compressor.h"
#include "core/body/pipe.h"

namespace sluice {

void InitCompression(Napi::Env env, Napi::Object exports);

// coding (1..3), level, brotliQuality at info[at..at+2], as lib/ passes
// them (lib/compress/compression.js CODING). False for anything else (a missing
// level or quality means the default: -1, 4).
bool CompressArgs(const Napi::CallbackInfo& info, size_t at,
                  CompressParams* p);

// A CompressJob over a whole response body, as res.end() / stream.end()
// pass it: a string (encoded to UTF-8, owned by the job), null/undefined
// (empty) or bytes (a Buffer/TypedArray/ArrayBuffer: referenced, and kept
// alive by a napi reference when the job may run on a worker). nullptr for
// anything else. The caller queues or runs it, then Destroy()s it.
CompressJob* BodyJob(napi_env env, napi_value body, const CompressParams& p);

// For file bodies (JsFile::RespondHttp1): when info[at] is a coding
// (1..3; then info[at+1] level, info[at+2] brotli quality), returns a
// CompressTransform over `src` (which it now owns); otherwise `src`
// itself. nullptr when the transform cannot be made (`src` is closed).
PipeSource* WrapCompression(const Napi::CallbackInfo& info, size_t at,
                            PipeSource* src);

}  // namespace sluice
