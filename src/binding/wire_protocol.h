// The JS <-> native wire protocol: every number lib/ and the binding
// exchange besides data (flags, packed words, results, allocator answers,
// codings). Each is defined once, here or in the core list it names, and
// exported to JS as the frozen object binding.constants (addon.cc); lib/
// reads them from there and writes none of them itself.
#pragma once

#include <cstdint>

#include "core/common/options.h"
#include "core/common/result.h"
#include "core/compress/compressor.h"
#include "core/http1/http1_session.h"
#include "core/http2/http2_session.h"
#include "core/observe/access_log.h"
#include "core/websocket/ws_frame.h"
#include "core/websocket/ws_session.h"

namespace sluice {
namespace wire {

// Values defined by the binding. V(C++ name, JS name, value)
#define SLUICE_WIRE_BINDING_LIST(V)                                            \
  /* NativeConnection.respond(seq, statusWord, ...) and the other HTTP/1.1  */ \
  /* response calls: statusWord = status | headFlags << STATUS_FLAGS_SHIFT */  \
  V(kStatusMask, STATUS_MASK, 0x3ff)                                           \
  V(kStatusFlagsShift, STATUS_FLAGS_SHIFT, 10)                                 \
  /* head flag (beside the core's HEAD_* below): end after the body */        \
  V(kHeadEnd, HEAD_END, 1 << 8)                                                \
  /* Results >= 0 of write/end/respond on both protocols: wait for 'drain' */ \
  V(kResultWaitDrain, RESULT_WAIT_DRAIN, 1)                                    \
  /* onRequest(conn, seq, method, url, headers, flags) */                      \
  V(kRequestComplete, REQUEST_COMPLETE, 1 << 0) /* body complete too */       \
  V(kRequestKeepAlive, REQUEST_KEEP_ALIVE, 1 << 1)                             \
  V(kRequestExpectContinue, REQUEST_EXPECT_CONTINUE, 1 << 2)                   \
  V(kRequestUpgrade, REQUEST_UPGRADE, 1 << 3)                                  \
  V(kRequestHasExpect, REQUEST_HAS_EXPECT, 1 << 4) /* any Expect header */    \
  V(kRequestHasHost, REQUEST_HAS_HOST, 1 << 5)                                 \
  /* beyond maxRequestsPerSocket: answered 503, 'dropRequest' */               \
  V(kRequestOverLimit, REQUEST_OVER_LIMIT, 1 << 6)                             \
  /* flags >> REQUEST_VERSION_SHIFT = major * 10 + minor */                    \
  V(kRequestVersionShift, REQUEST_VERSION_SHIFT, 8)                            \
  V(kVersion11, VERSION_1_1, 11)                                               \
  V(kVersion20, VERSION_2_0, 20)                                               \
  V(kVersion30, VERSION_3_0, 30)                                               \
  /* onAlloc(conn, size) answers besides a Buffer (BufferResult) */           \
  V(kAllocFallback, ALLOC_FALLBACK, 0) /* copy this read */                   \
  V(kAllocDry, ALLOC_DRY, 1)           /* pool dry: stop reading */           \
  V(kAllocError, ALLOC_ERROR, 2)       /* allocator threw: destroy */         \
  /* NativeHttp2Session.respond/end/info flags (beside H2_END_STREAM, */      \
  /* H2_WAIT_FOR_TRAILERS below) */                                            \
  V(kH2Http1Block, H2_HTTP1_BLOCK, 1 << 2) /* "Name: value\r\n" lines */      \
  V(kH2AddDate, H2_ADD_DATE, 1 << 3)       /* add date unless present */      \
  V(kH2EndAfterBody, H2_END_AFTER_BODY, 1 << 4) /* whole body: end, length */ \
  /* NativeFile.lookupStatic (the serveStatic middleware): its kinds */      \
  V(kStaticMiss, STATIC_MISS, 0)                                             \
  V(kStaticAnswered, STATIC_ANSWERED, 1)                                     \
  V(kStaticPending, STATIC_PENDING, 2)                                       \
  V(kStaticDirectory, STATIC_DIRECTORY, 3) /* a miss that is a directory */  \
  /* its flags argument: report the file's path and stat with the answer */  \
  V(kStaticWantFile, STATIC_WANT_FILE, 1 << 0)                               \
  /* an answer's flags word: bits 0-7 its fields (staticAnswerFields), */     \
  /* and these */                                                            \
  V(kStaticAnswerBody, STATIC_ANSWER_BODY, 1 << 8) /* a file body follows */ \
  V(kStaticAnswerFile, STATIC_ANSWER_FILE, 1 << 9) /* stat + path given */

#define SLUICE_WIRE_CONSTEXPR(cpp, js, value) inline constexpr int cpp = value;
SLUICE_WIRE_BINDING_LIST(SLUICE_WIRE_CONSTEXPR)
#undef SLUICE_WIRE_CONSTEXPR

// Values the core defines (its enums), exported under these names.
// V(JS name, value)
#define SLUICE_WIRE_CORE_LIST(V)                                         \
  /* ResponseHeadFlags (http1_session.h): framing headers the user set */ \
  V(HEAD_USER_CONTENT_LENGTH, kHeadUserContentLength)                    \
  V(HEAD_USER_TRANSFER_ENCODING, kHeadUserTransferEncoding)              \
  V(HEAD_USER_CHUNKED, kHeadUserChunked)                                 \
  V(HEAD_USER_DATE, kHeadUserDate)                                       \
  V(HEAD_USER_CONNECTION, kHeadUserConnection)                           \
  V(HEAD_USER_CONNECTION_CLOSE, kHeadUserConnectionClose)                \
  V(HEAD_USER_KEEP_ALIVE, kHeadUserKeepAlive)                            \
  V(HEAD_WHOLE_BODY, kHeadWholeBody)                                     \
  /* Http2RespondFlags (http2_session.h) */                              \
  V(H2_END_STREAM, kH2EndStream)                                         \
  V(H2_WAIT_FOR_TRAILERS, kH2WaitForTrailers)                            \
  /* TunnelEvents (options.h): which of 'upgrade' / 'connect' is heard */ \
  V(TUNNEL_UPGRADE, kTunnelUpgrade)                                      \
  V(TUNNEL_CONNECT, kTunnelConnect)                                      \
  /* ServerOptions (options.h): the HTTP/2 stream window's default */   \
  V(H2_DEFAULT_STREAM_WINDOW,                                            \
    static_cast<double>(ServerOptions{}.http2_stream_window))            \
  /* Coding (compressor.h) */                                            \
  V(CODING_GZIP, static_cast<int>(Coding::kGzip))                        \
  V(CODING_DEFLATE, static_cast<int>(Coding::kDeflate))                  \
  V(CODING_BR, static_cast<int>(Coding::kBrotli))                        \
  /* WsSendResult (ws_session.h): what a WebSocket send did */           \
  V(WS_SENT, kWsSent)                                                    \
  V(WS_BUFFERED, kWsBuffered)                                            \
  V(WS_DROPPED, kWsDropped)                                              \
  V(WS_NOT_OPEN, kWsNotOpen)                                             \
  /* WsOpcode (ws_frame.h): the opcodes lib/ sends */                    \
  V(WS_OPCODE_TEXT, kWsText)                                             \
  V(WS_OPCODE_BINARY, kWsBinary)                                         \
  V(WS_OPCODE_PING, kWsPing)                                             \
  V(WS_OPCODE_PONG, kWsPong)                                             \
  /* AccessLog::Format (observe/access_log.h): the accessLog formats */  \
  V(ACCESS_LOG_COMBINED, static_cast<int>(AccessLog::kCombined))         \
  V(ACCESS_LOG_JSON, static_cast<int>(AccessLog::kJson))

// The head flags the core reads from a status word (the rest are the
// binding's, as kHeadEnd).
inline constexpr uint32_t kCoreHeadFlagsMask = 0xff;
static_assert(kHeadWholeBody <= kCoreHeadFlagsMask && kHeadEnd > kCoreHeadFlagsMask,
              "kHeadEnd must not collide with the core's head flags");
static_assert(kH2Http1Block > kH2WaitForTrailers,
              "binding HTTP/2 flags must not collide with the core's");

}  // namespace wire
}  // namespace sluice
